import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import {
  OAuthMetadata,
  OAuthProtectedResourceMetadata,
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
} from '@modelcontextprotocol/server';
import { acceptApiKey } from '@/auth/credentials';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { NotFoundError } from '@/core/errors';
import { ServedProject } from '@/core/project/served-project';
import { setBearerChallenge } from '@/http/errors/bearer-challenge';
import { AuthorizationServer, MCP_SCOPE } from '@/oauth/authorization-server';
import { mcpResourceOf } from '@/oauth/mcp-resource';

/** Where RFC 9728 puts a resource's metadata: this, then the resource's own path. */
export const WELL_KNOWN = '.well-known/oauth-protected-resource';

/**
 * With an authorization server, the MCP endpoint is a protected resource as the MCP authorization spec asks:
 * its Protected Resource Metadata (RFC 9728) names the authorization server, and a 401 on it says where that
 * document is (`WWW-Authenticate: Bearer resource_metadata=...`), so that an assistant can sign a person in
 * and come back with its token. The authorization server is Drey's own when OAUTH_SERVER is on (the
 * resource is then the endpoint on its issuer's origin, as its tokens are bound to it), else the identity
 * provider (OIDC_ISSUER; the resource is the endpoint as the request reached it, scheme and Host). The
 * document is the SDK's (`buildOAuthProtectedResourceMetadata`).
 */
@Injectable()
export class McpProtectedResource {
  private readonly issuer?: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly served: ServedProject,
    private readonly server: AuthorizationServer,
  ) {
    this.issuer = config.sso.oidc?.issuer;
    this.anonymous = config.mcpAnonymous;
    // An issuer the SDK refuses (HTTP outside localhost) stops the start, not the first assistant.
    if (this.issuer !== undefined) this.document(this.issuer, new URL('http://localhost/mcp'));
  }

  private readonly anonymous: boolean;

  /** Whether the endpoint has an authorization server. */
  get enabled(): boolean {
    return this.server.enabled || this.issuer !== undefined;
  }

  /** Whether a request without a credential is answered 401 (unless MCP_ANONYMOUS) rather than served. */
  get asksToSignIn(): boolean {
    return this.enabled && !this.anonymous;
  }

  /** The document of the MCP endpoint at `path` (404 without an authorization server). */
  metadata(request: Request, path: string): OAuthProtectedResourceMetadata {
    const resource = this.resourceOf(request, path.startsWith('/') ? path : `/${path}`);
    if (resource === undefined) throw new NotFoundError('No such resource');
    return this.document(resource.issuer, resource.url);
  }

  /** The challenge of a 401 on the MCP endpoint this request reached. */
  challenge(request: Request): string {
    // originalUrl: the whole path, whatever a middleware's mount took off `url`.
    const path = request.originalUrl.split('?', 1)[0];
    const resource = this.resourceOf(request, path);
    if (resource === undefined) return 'Bearer';
    const url = getOAuthProtectedResourceMetadataUrl(resource.url);
    return this.server.enabled
      ? `Bearer resource_metadata="${url}", scope="${MCP_SCOPE}"`
      : `Bearer resource_metadata="${url}"`;
  }

  private resourceOf(request: Request, path: string): { issuer: string; url: URL } | undefined {
    if (this.server.enabled) {
      const issuer = this.server.issuer(request);
      return { issuer, url: new URL(mcpResourceOf(this.server.resourceOrigin(request), path)) };
    }
    if (this.issuer === undefined) return undefined;
    return { issuer: this.issuer, url: this.urlOf(request, path) };
  }

  private document(issuer: string, resource: URL): OAuthProtectedResourceMetadata {
    return {
      ...buildOAuthProtectedResourceMetadata({
        oauthMetadata: { issuer } as OAuthMetadata,
        resourceServerUrl: resource,
        resourceName: `Drey: ${this.served.current.label}`,
      }),
      ...(this.server.enabled && { scopes_supported: [MCP_SCOPE] }),
      bearer_methods_supported: ['header'],
    };
  }

  private urlOf(request: Request, path: string): URL {
    return new URL(path, this.originOf(request));
  }

  /**
   * The origin a request reached, `http://drey.example.com`: its scheme and its `Host` (which the `Host`
   * rule of every route has checked), the service knowing no public URL of its own.
   */
  originOf(request: Request): string {
    return `${request.protocol}://${request.headers.host ?? 'localhost'}`;
  }
}

/**
 * Marks requests to the MCP endpoint, before the bearer guard reads them: their `x-api-key` is a credential
 * (the endpoint's alone, for headless clients), and with OIDC their 401 carries the endpoint's challenge.
 */
@Injectable()
export class McpChallengeMiddleware implements NestMiddleware {
  constructor(private readonly resource: McpProtectedResource) {}

  use(request: Request, _response: Response, next: NextFunction): void {
    acceptApiKey(request);
    if (this.resource.enabled) setBearerChallenge(request, this.resource.challenge(request));
    next();
  }
}
