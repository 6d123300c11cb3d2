import { ConfigError } from '@/config/config-error';
import { type Env, integer, oneOf, url } from '@/config/env-values';

/** Drey's own authorization server (src/oauth, docs/mcp.md "Signing in"): who may sign an assistant in. */
export interface OAuthConfig {
  /** OAUTH_SERVER: whether Drey answers OAuth 2.1 sign-ins for its MCP endpoint. */
  enabled: boolean;
  /**
   * PUBLIC_URL: the origin people and assistants reach the service at (behind a proxy, the proxy's). The
   * authorization server's issuer; without it, the address the server listens on.
   */
  publicUrl?: string;
  /** OAUTH_REGISTRATION: dynamic client registration (RFC 7591), the fallback of clients without CIMD. */
  registration: boolean;
  /** OAUTH_MAX_CLIENTS: registered clients kept at most; registration is refused past it. */
  maxClients: number;
  /** OAUTH_REGISTRATIONS_PER_HOUR: registrations one address may make in an hour. */
  registrationsPerHour: number;
  /** OAUTH_CLIENT_UNUSED_DAYS: a registered client no sign-in has used for this long is forgotten. */
  clientUnusedDays: number;
  /** OAUTH_CIMD: clients whose client_id is the HTTPS URL of their metadata document. */
  clientMetadataDocuments: boolean;
  /**
   * OAUTH_CIMD_ALLOW_LOOPBACK: for tests and development only, metadata documents may be fetched from a
   * loopback address (never any other special-use address).
   */
  cimdAllowLoopback: boolean;
  /** Lifetimes, in seconds. */
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
}

const flag = (env: Env, name: string, fallback: boolean): boolean =>
  oneOf(env, name, ['true', 'false', 'on', 'off'], fallback ? 'true' : 'false').match(
    /^(true|on)$/,
  ) !== null;

export function oauth(env: Env): OAuthConfig {
  const publicUrl = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (publicUrl !== undefined) {
    const parsed = new URL(publicUrl);
    if (parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '') {
      throw new ConfigError('PUBLIC_URL', 'must be an origin: scheme, host and port only');
    }
  }
  return {
    enabled: flag(env, 'OAUTH_SERVER', false),
    publicUrl: publicUrl === undefined ? undefined : new URL(publicUrl).origin,
    registration: flag(env, 'OAUTH_REGISTRATION', true),
    maxClients: integer(env, 'OAUTH_MAX_CLIENTS', 1000, 1, 1_000_000),
    registrationsPerHour: integer(env, 'OAUTH_REGISTRATIONS_PER_HOUR', 10, 1, 10_000),
    clientUnusedDays: integer(env, 'OAUTH_CLIENT_UNUSED_DAYS', 30, 1, 3650),
    clientMetadataDocuments: flag(env, 'OAUTH_CIMD', true),
    cimdAllowLoopback: flag(env, 'OAUTH_CIMD_ALLOW_LOOPBACK', false),
    accessTokenSeconds: integer(env, 'OAUTH_ACCESS_TOKEN_SECONDS', 3600, 60, 86400),
    refreshTokenSeconds: integer(env, 'OAUTH_REFRESH_TOKEN_SECONDS', 30 * 86400, 3600, 365 * 86400),
  };
}
