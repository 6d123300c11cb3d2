import { InvalidRequestError } from '@/core/errors';

/** OAuth 2.0 client credentials: Drey accepts them with a login and does not check them. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** The Basic scheme, whatever follows it; what follows must then be one base64 token. */
const BASIC_SCHEME = /^basic(?:\s|$)/i;
const BASIC = /^basic(?:\s+(\S*))?\s*$/i;

/** True when an Authorization header uses the Basic scheme (how OAuth clients send their credentials). */
export function isBasicAuthorization(header: string | undefined): boolean {
  return header !== undefined && BASIC_SCHEME.test(header.trim());
}

/**
 * The client credentials of a Basic `Authorization` header (RFC 6749 2.3.1: `client_id:client_secret`, each
 * form-urlencoded, then base64). Empty credentials (`Basic Og==`, which Swagger UI sends by default) are no
 * credentials. A header that does not decode to `id:secret` is the client's error.
 */
export function basicClientCredentials(header: string): ClientCredentials | undefined {
  const encoded = BASIC.exec(header.trim())?.[1] ?? '';
  const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(encoded)
    ? Buffer.from(encoded, 'base64').toString('utf8')
    : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) {
    throw new InvalidRequestError(
      'The Basic Authorization header must carry base64 of "client_id:client_secret"',
    );
  }
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    return clientId === '' && clientSecret === '' ? undefined : { clientId, clientSecret };
  } catch {
    throw new InvalidRequestError(
      'The client credentials of the Basic Authorization header are not form-encoded',
    );
  }
}
