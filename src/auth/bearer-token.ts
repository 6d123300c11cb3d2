import type { Request } from 'express';
import { InvalidTokenError } from '@/core/errors';

/**
 * The token of an `Authorization: Bearer <token>` header; undefined when there is none. An empty header or
 * a bare "Bearer" counts as none (browser clients send that when signed out); any other scheme or shape
 * is the client's error.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const value = header?.trim() ?? '';
  if (value === '' || /^bearer$/i.test(value)) return undefined;
  const match = /^bearer\s+(\S+)$/i.exec(value);
  if (!match) throw new InvalidTokenError('The Authorization header must be "Bearer <token>"');
  return match[1];
}

/** The request's bearer token, for passport-jwt (which wants null for "none"). */
export function bearerTokenOf(request: Request): string | null {
  return bearerToken(request.headers.authorization) ?? null;
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
