import type { IncomingMessage } from 'node:http';
import { parse as parseCookies } from 'cookie';
import { InvalidTokenError } from '@/core/errors';
import { isDashboardPagePath } from '@/http/routes';

/**
 * What a caller presents, as a door found it. Each door only finds its credential (an HTTP request's
 * `Authorization` header or `x_embed_token`, `drey mcp`'s DREY_TOKEN) and hands it to CallerResolver, the
 * one place that turns a credential into a caller.
 */
export type Credential =
  /** Nothing presented: an anonymous caller. */
  | { readonly kind: 'none' }
  /**
   * A token sent as a bearer token (`Authorization: Bearer`, DREY_TOKEN): a Drey token, an embedding token
   * or, with OIDC configured, an identity provider's.
   */
  | {
      readonly kind: 'bearer';
      readonly token: string;
      /** The HTTP request that carried it, where there is one (an OAuth token is checked against its path). */
      readonly request?: IncomingMessage;
    }
  /**
   * `x_embed_token` of a GET's query: how a browser's iframe or image, which cannot send headers, carries an
   * embedding token. Only an embedding's: any other token in a URL would end up in logs and histories.
   */
  | { readonly kind: 'embed-link'; readonly token: string }
  /**
   * An `x-api-key` header, on the MCP endpoint only (where {@link acceptApiKey} marked the request): a Drey
   * token (named, for a headless client) sent as MCP servers such as squirrels' take it.
   */
  | { readonly kind: 'api-key'; readonly token: string }
  /**
   * A browser's session (its `drey_session` cookie, a Drey login token set by the browser sign-in page,
   * sign-in/), on a safe GET of a dashboard's page only: never on a write, so no other site's form or
   * script can act with it.
   */
  | { readonly kind: 'browser-session'; readonly token: string }
  /** Identity headers, which count only when the request comes straight from a trusted proxy. */
  | { readonly kind: 'identity-headers'; readonly request: IncomingMessage };

export const NO_CREDENTIAL: Credential = Object.freeze({ kind: 'none' });

/**
 * The token of an `Authorization: Bearer <token>` header; undefined when there is none. An empty header or
 * a bare "Bearer" counts as none (browser clients send that when signed out); any other scheme or shape
 * is the client's error.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const value = header?.trim() ?? '';
  if (value === '' || /^bearer$/i.test(value)) return undefined;
  const match = /^bearer\s+(\S+)$/i.exec(value);
  if (match) return match[1];
  if (/^bearer\s/i.test(value)) {
    // The scheme is right and the value is not one token: most often a script that put what a failed
    // login answered (a JSON error body) where the token should be. Saying so beats "must be Bearer".
    throw new InvalidTokenError(
      value.slice(6).trim().startsWith('{')
        ? 'The bearer value is a JSON body, not a token: the call that should have given the token ' +
            'failed (its answer is what was sent); use the access_token of a login or of POST P/tokens'
        : 'The bearer value is not a token (a token holds no spaces): send the access_token of a ' +
            'login or of POST P/tokens',
    );
  }
  throw new InvalidTokenError('The Authorization header must be "Bearer <token>"');
}

/** Marks requests whose route takes `x-api-key` (the MCP endpoint's), before the guard reads them. */
const API_KEY_ACCEPTED = Symbol('apiKeyAccepted');

/**
 * Lets {@link credentialOf} read this request's `x-api-key` header. Elsewhere the header is ignored, as it
 * always was: a gateway in front (AWS API Gateway's own keys, for one) may pass its key along.
 */
export function acceptApiKey(request: IncomingMessage): void {
  (request as IncomingMessage & { [API_KEY_ACCEPTED]?: true })[API_KEY_ACCEPTED] = true;
}

/**
 * The `x-api-key` header of a request that takes one; undefined when there is none (or it is empty). Sent
 * twice, it is the client's error.
 */
function apiKeyOf(request: IncomingMessage): string | undefined {
  if (!(request as IncomingMessage & { [API_KEY_ACCEPTED]?: true })[API_KEY_ACCEPTED]) {
    return undefined;
  }
  const value: unknown = request.headers['x-api-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidTokenError('Send one x-api-key header');
  const key = value.trim();
  if (key === '') return undefined;
  if (/\s/.test(key)) throw new InvalidTokenError('The x-api-key header must be one token');
  return key;
}

/**
 * The HTTP door's credential, in the order it counts: a bearer token, else (on the MCP endpoint) an
 * `x-api-key`, else an embedding token in a GET's query, else identity headers (CallerResolver decides
 * whether they count, and without them the caller is anonymous). 401 `invalid_token` for an
 * `Authorization` header that is neither empty nor a bearer token, and for a bearer token and an
 * `x-api-key` sent together: which one stands for the caller would be a guess.
 */
export function credentialOf(request: IncomingMessage & { query?: unknown }): Credential {
  const token = bearerToken(request.headers.authorization);
  const apiKey = apiKeyOf(request);
  if (token !== undefined && apiKey !== undefined) {
    throw new InvalidTokenError('Send either Authorization: Bearer or x-api-key, not both');
  }
  if (token !== undefined) return { kind: 'bearer', token, request };
  if (apiKey !== undefined) return { kind: 'api-key', token: apiKey };
  if (request.method === 'GET' || request.method === 'HEAD') {
    const value = (request.query as Record<string, unknown> | undefined)?.x_embed_token;
    if (typeof value === 'string' && value !== '') return { kind: 'embed-link', token: value };
    const session = browserSessionOf(request);
    if (session !== undefined) return { kind: 'browser-session', token: session };
  }
  return { kind: 'identity-headers', request };
}

/** The cookie a browser's session is kept in (sign-in/browser-session.ts sets it). */
export const SESSION_COOKIE = 'drey_session';

/** The browser session of a GET of a dashboard's page, when its cookie is there. */
function browserSessionOf(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || header.length > 8192) return undefined;
  const path = new URL(request.url ?? '/', 'http://x').pathname;
  if (!isDashboardPagePath(path)) return undefined;
  const value = parseCookies(header)[SESSION_COOKIE];
  return value === undefined || value === '' ? undefined : value;
}

/** The `alg` of a JWT's header, without checking anything else. */
export function jwtAlgorithm(token: string): string | undefined {
  try {
    const encoded = token.split('.', 1)[0];
    const header = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as {
      alg?: unknown;
    };
    return typeof header.alg === 'string' ? header.alg : undefined;
  } catch {
    return undefined;
  }
}
