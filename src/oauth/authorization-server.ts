import { createHmac, generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { SECRETS, Secrets } from '@/config/secrets';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { JsonLogger } from '@/runtime/json-logger';
import { AuditService } from '@/audit/audit.service';
import { escapeHtml } from '@/http/html';
import { postgresAdapter } from '@/oauth/postgres-adapter';
import { OidcProvider, oidcProvider } from '@/oauth/oidc-provider';
import { isMcpResourcePath } from '@/oauth/mcp-resource';
import { isLoopbackHost } from '@/config/loopback';
import { signInPath } from '@/oauth/oauth-paths';
import { RegistrationRate } from '@/oauth/registration-limits';
import { clientAddress } from '@/http/request/client-address';

/** How long a grant (a person's consent to a client) lasts unless revoked: a year. */
export const GRANT_SECONDS = 365 * 86400;

/** The scope of the MCP endpoint's access tokens. */
export const MCP_SCOPE = 'mcp';

/** Where the library's endpoints are served, under Drey's own paths (OAuthController). */
const ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  introspection: '/oauth/introspect',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
};

/** A signing key the replicas share, made by the first to need it (ID tokens; access tokens are opaque). */
const SIGNING_KEY = { model: 'SigningKey', id: 'rs256-1' };

/**
 * Drey's own OAuth 2.1 authorization server, for its users and its MCP endpoint: `oidc-provider`, the
 * OpenID-certified library, does the protocol (metadata, the authorization code flow with PKCE S256 only,
 * refresh tokens rotated on use, revocation, resource indicators, dynamic registration, client ID metadata
 * documents with its own SSRF guards); this configures it. Its state is in Postgres (`oauth_records`,
 * postgres-adapter.ts), so any replica answers any step. Access tokens are opaque, bound to the one
 * resource they were asked for (this deployment's MCP endpoint, RFC 8707), and looked up on every use, so a
 * revoked grant is refused from the next call (OAuthAccess).
 *
 * Made on first use: its issuer is PUBLIC_URL, or the address the server listens on (which is known only
 * once it listens).
 */
@Injectable()
export class AuthorizationServer {
  private made?: Promise<OidcProvider>;
  private issuerUrl?: string;
  private readonly rate: RegistrationRate;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRETS) private readonly secrets: Secrets,
    private readonly records: OAuthRecordsRepository,
    private readonly users: UsersRepository,
    private readonly logger: JsonLogger,
    private readonly audit: AuditService,
  ) {
    this.rate = new RegistrationRate(config.oauth.registrationsPerHour);
  }

  get enabled(): boolean {
    return this.config.oauth.enabled;
  }

  /** The issuer: PUBLIC_URL, else the address this request reached the server at (its port). */
  issuer(request: IncomingMessage): string {
    this.issuerUrl ??= this.config.oauth.publicUrl ?? listeningOrigin(this.config.host, request);
    return this.issuerUrl;
  }

  /**
   * The origin the MCP endpoint is reached at by this request, as its tokens name it: PUBLIC_URL, else, for
   * a service bound to loopback, the loopback name the request used (its Host passed the Host rule), else
   * the issuer's.
   */
  resourceOrigin(request: IncomingMessage): string {
    const issuer = this.issuer(request);
    if (!this.loopbackNames) return issuer;
    const host = request.headers.host;
    if (host === undefined) return issuer;
    const candidate = `${new URL(issuer).protocol}//${host}`;
    return isMcpResourcePath(issuer, `${candidate}/mcp`, true) ? new URL(candidate).origin : issuer;
  }

  /** Whether tokens may name this server by any of its loopback names (no PUBLIC_URL, bound to loopback). */
  private get loopbackNames(): boolean {
    return this.config.oauth.publicUrl === undefined && isLoopbackHost(this.config.host);
  }

  /** The provider, made once. */
  provider(request: IncomingMessage): Promise<OidcProvider> {
    this.made ??= this.make(this.issuer(request));
    return this.made;
  }

  /**
   * Every token issued (a code exchanged, a refresh) and every revocation (RFC 7009, a grant ended by a
   * refresh token used twice) is audited, under the person's name, with the client.
   */
  private auditTokens(provider: OidcProvider): void {
    const record = (
      action: string,
      accountId: unknown,
      target: unknown,
      details: Record<string, unknown>,
    ) => {
      void (async () => {
        const user =
          typeof accountId === 'string'
            ? await this.users.findById(accountId).catch(() => null)
            : null;
        await this.audit.record({
          action,
          actor: user?.username ?? null,
          target: typeof target === 'string' ? target.slice(0, 255) : null,
          details,
        });
      })().catch((error: unknown) =>
        this.logger.emit('error', 'oauth event not audited', {
          action,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    };
    provider.on('grant.success', (ctx) => {
      const { oidc } = ctx as TokenContext;
      const refresh = oidc.params?.grant_type === 'refresh_token';
      record(
        refresh ? 'oauth_refresh' : 'oauth_token',
        oidc.entities?.Account?.accountId,
        oidc.entities?.Client?.clientId,
        {
          grant: oidc.entities?.Grant?.jti ?? null,
        },
      );
    });
    provider.on('grant.revoked', (ctx, grantId) => {
      const { oidc } = ctx as TokenContext;
      record(
        'oauth_revoke',
        oidc.entities?.Account?.accountId ?? oidc.entities?.RefreshToken?.accountId,
        oidc.entities?.Client?.clientId,
        {
          grant: grantId,
          reason: oidc.route === 'token' ? 'refresh token used twice' : 'revoked by the client',
        },
      );
    });
    for (const kind of ['access_token', 'refresh_token']) {
      provider.on(`${kind}.destroyed`, (token) => {
        const { accountId, clientId, grantId } = token as {
          accountId?: string;
          clientId?: string;
          grantId?: string;
        };
        record('oauth_revoke', accountId, clientId, { grant: grantId ?? null, token: kind });
      });
    }
  }

  private async registrationRefusal(request: IncomingMessage): Promise<Refusal | undefined> {
    const wait = this.rate.take(clientAddress(request));
    if (wait > 0) {
      return {
        status: 429,
        retryAfter: wait,
        message: `Too many registrations from this address: try again in ${wait} seconds`,
      };
    }
    if ((await this.records.count('Client')) >= this.config.oauth.maxClients) {
      return {
        status: 503,
        retryAfter: 3600,
        message:
          'This service keeps no more registered clients for now; a client ID metadata document needs no registration',
      };
    }
    return undefined;
  }

  private async make(issuer: string): Promise<OidcProvider> {
    const { default: Provider, errors } = oidcProvider();
    const settings = this.config.oauth;
    const key = await this.records.findOrInsert(SIGNING_KEY.model, SIGNING_KEY.id, {
      jwk: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    });
    const secure = issuer.startsWith('https:');
    const cookieKey = createHmac('sha256', this.secrets.jwtSecret)
      .update('drey oauth cookies')
      .digest('base64url');
    const users = this.users;
    const records = this.records;
    const provider = new Provider(issuer, {
      adapter: postgresAdapter(records, settings.clientUnusedDays * 86400),
      jwks: { keys: [{ ...(key.jwk as object), kid: SIGNING_KEY.id, use: 'sig', alg: 'RS256' }] },
      cookies: {
        keys: [cookieKey],
        long: { signed: true, httpOnly: true, sameSite: 'lax', secure },
        short: { signed: true, httpOnly: true, sameSite: 'lax', secure },
      },
      findAccount: async (_ctx: unknown, id: string) => {
        const user = await users.findById(id).catch(() => null);
        if (user === null) return undefined;
        return {
          accountId: user.id,
          claims: () => ({ sub: user.id, preferred_username: user.username }),
        };
      },
      claims: { openid: ['sub'], profile: ['preferred_username'] },
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      interactions: {
        url: (_ctx: unknown, interaction: { uid: string }) => signInPath(interaction.uid),
      },
      routes: ROUTES,
      pkce: { required: () => true },
      responseTypes: ['code'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      // A client that may refresh gets a refresh token, rotated at every use.
      issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      // Consent is remembered per person and client until the grant is revoked (SignInPages asks once).
      loadExistingGrant: async (ctx: {
        oidc: { client?: { clientId: string }; session?: { accountId?: string } };
      }) => {
        const accountId = ctx.oidc.session?.accountId;
        const clientId = ctx.oidc.client?.clientId;
        if (accountId === undefined || clientId === undefined) return undefined;
        const grants = await records.listByAccount('Grant', accountId, 1000);
        const kept = grants.find((grant) => grant.payload.clientId === clientId);
        return kept === undefined ? undefined : provider.Grant.find(kept.id);
      },
      features: {
        devInteractions: { enabled: false },
        revocation: { enabled: true },
        registration: { enabled: settings.registration },
        resourceIndicators: {
          enabled: true,
          // A client that names no resource gets a token for nothing but the sign-in itself.
          defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (!isMcpResourcePath(issuer, indicator, this.loopbackNames)) {
              throw new errors.InvalidTarget('resource must be this service’s MCP endpoint');
            }
            return {
              scope: MCP_SCOPE,
              audience: indicator,
              accessTokenFormat: 'opaque',
              accessTokenTTL: settings.accessTokenSeconds,
            };
          },
        },
        clientIdMetadataDocument: { enabled: settings.clientMetadataDocuments, ack: 'draft-02' },
      },
      // The library's own guards stay (2.5 s, special-use addresses refused, 5 KB documents); a loopback
      // metadata document is let through only when OAUTH_CIMD_ALLOW_LOOPBACK says so, for tests.
      fetch: (url: string | URL, options: RequestInit & { dispatcher?: unknown }) => {
        if (settings.cimdAllowLoopback && isLoopbackUrl(url)) delete options.dispatcher;
        return globalThis.fetch(url, options);
      },
      fetchResponseBodyLimits: {
        'client_id metadata document': 5 * 1024,
        jwks_uri: 64 * 1024,
        sector_identifier_uri: 64 * 1024,
      },
      ttl: {
        AccessToken: settings.accessTokenSeconds,
        AuthorizationCode: 60,
        RefreshToken: settings.refreshTokenSeconds,
        Interaction: 600,
        Session: 14 * 86400,
        Grant: GRANT_SECONDS,
        IdToken: 3600,
      },
      renderError: (ctx: { type: string; body: string }, out: Record<string, string>) => {
        ctx.type = 'html';
        ctx.body = errorPage(out);
      },
    });
    provider.proxy = true;
    // A client that asks for no scope (OAuth lets it) is asking for the endpoint's one scope, the only
    // thing this server grants: without it the library would grant nothing and answer access_denied.
    provider.use(async (ctx, next) => {
      if (ctx.method === 'GET' && ctx.path === ROUTES.authorization) {
        const query = new URLSearchParams(ctx.querystring);
        if (!query.has('scope')) {
          query.set('scope', MCP_SCOPE);
          ctx.querystring = query.toString();
        }
      }
      await next();
    });
    // Registration is bounded: so many an hour per address, so many clients kept in all.
    provider.use(async (ctx, next) => {
      if (ctx.method === 'POST' && ctx.path === ROUTES.registration) {
        const refusal = await this.registrationRefusal(ctx.req);
        if (refusal !== undefined) {
          ctx.status = refusal.status;
          if (refusal.retryAfter !== undefined) ctx.set('Retry-After', String(refusal.retryAfter));
          ctx.body = { error: 'invalid_request', error_description: refusal.message };
          return;
        }
      }
      await next();
    });
    this.auditTokens(provider);
    provider.on('server_error', (_ctx: unknown, error: unknown) =>
      this.logger.emit('error', 'oauth server error', {
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
    );
    return provider;
  }
}

/** What the library's token events carry of their request. */
interface TokenContext {
  oidc: {
    route?: string;
    params?: Record<string, unknown>;
    entities?: {
      Account?: { accountId: string };
      Client?: { clientId: string };
      Grant?: { jti: string };
      RefreshToken?: { accountId: string };
    };
  };
}

/** Why a registration is refused now, if it is. */
interface Refusal {
  status: number;
  message: string;
  retryAfter?: number;
}

function listeningOrigin(host: string, request: IncomingMessage): string {
  const port = request.socket.localPort;
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host;
  return `http://${isIP(name) === 6 ? `[${name}]` : name}:${port}`;
}

function isLoopbackUrl(url: string | URL): boolean {
  const { hostname } = new URL(url);
  return hostname === 'localhost' || hostname === '[::1]' || /^127\./.test(hostname);
}

/** The library's error, as a page of ours (no script, no styles from elsewhere). */
function errorPage(out: Record<string, string>): string {
  const lines = Object.entries(out)
    .filter(([name]) => name === 'error' || name === 'error_description')
    .map(([, value]) => `<p>${escapeHtml(String(value))}</p>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head><body><main><h1>Sign-in error</h1>${lines}</main></body></html>`;
}
