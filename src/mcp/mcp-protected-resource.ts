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

/** Where RFC 9728 puts a resource's metadata: this, then the resource's own path. */
export const WELL_KNOWN = '.well-known/oauth-protected-resource';

/**
 * With OIDC configured, the MCP endpoint is a protected resource as the MCP authorization spec asks: its
 * Protected Resource Metadata (RFC 9728) names the identity provider (OIDC_ISSUER) as its authorization
 * server, and a 401 on it says where that document is (`WWW-Authenticate: Bearer resource_metadata=...`),
 * so that an assistant can sign a person in through the provider and come back with its token. The
 * document is the SDK's (`buildOAuthProtectedResourceMetadata`); the resource's URL is the endpoint as the
 * request reached it (scheme and Host), the service knowing no public URL of its own.
 */
@Injectable()
export class McpProtectedResource {
  private readonly issuer?: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly served: ServedProject,
  ) {
    this.issuer = config.sso.oidc?.issuer;
    // An issuer the SDK refuses (HTTP outside localhost) stops the start, not the first assistant.
    if (this.issuer !== undefined) this.document(new URL('http://localhost/mcp'));
  }

  get enabled(): boolean {
    return this.issuer !== undefined;
  }

  /** The document of the MCP endpoint at `path` (404 without OIDC: there is no authorization server). */
  metadata(request: Request, path: string): OAuthProtectedResourceMetadata {
    if (this.issuer === undefined) throw new NotFoundError('No such resource');
    return this.document(this.urlOf(request, path));
  }

  /** The challenge of a 401 on the MCP endpoint this request reached. */
  challenge(request: Request): string {
    // originalUrl: the whole path, whatever a middleware's mount took off `url`.
    const path = request.originalUrl.split('?', 1)[0];
    const url = getOAuthProtectedResourceMetadataUrl(this.urlOf(request, path));
    return `Bearer resource_metadata="${url}"`;
  }

  private document(resource: URL): OAuthProtectedResourceMetadata {
    return {
      ...buildOAuthProtectedResourceMetadata({
        oauthMetadata: { issuer: this.issuer } as OAuthMetadata,
        resourceServerUrl: resource,
        resourceName: `Drey: ${this.served.current.label}`,
      }),
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
