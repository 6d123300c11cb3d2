import type { Request } from 'express';
import { bearerToken, bearerTokenOf, jwtAlgorithm } from '@/auth/bearer-token';
import { InvalidTokenError } from '@/core/errors';

const requestWith = (authorization?: string) => ({ headers: { authorization } }) as Request;
const segment = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

describe('bearer tokens in the Authorization header', () => {
  it('counts an empty header and a bare "Bearer" as no token (signed-out browser clients)', () => {
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('')).toBeUndefined();
    expect(bearerToken('  ')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('bearer  ')).toBeUndefined();
  });

  it('takes the token after the scheme, in any case', () => {
    expect(bearerToken('Bearer a.b.c')).toBe('a.b.c');
    expect(bearerToken('BEARER   a.b.c ')).toBe('a.b.c');
  });

  it('refuses any other shape as an invalid token', () => {
    for (const header of ['Token a.b.c', 'Bearer a b', 'a.b.c', 'Basic Og==']) {
      expect(() => bearerToken(header)).toThrow(InvalidTokenError);
    }
  });

  it('gives passport-jwt null for no token', () => {
    expect(bearerTokenOf(requestWith())).toBeNull();
    expect(bearerTokenOf(requestWith('Bearer'))).toBeNull();
    expect(bearerTokenOf(requestWith('Bearer x.y.z'))).toBe('x.y.z');
  });
});

describe('jwtAlgorithm', () => {
  it("reads the header's alg without checking the token", () => {
    expect(jwtAlgorithm(`${segment({ alg: 'HS256', typ: 'JWT' })}.e30.sig`)).toBe('HS256');
    expect(jwtAlgorithm(`${segment({ alg: 'RS256' })}.e30.sig`)).toBe('RS256');
  });

  it('is undefined for a header that is not JSON or has no alg', () => {
    expect(jwtAlgorithm('not-base64!.e30.sig')).toBeUndefined();
    expect(jwtAlgorithm(`${segment({ typ: 'JWT' })}.e30.sig`)).toBeUndefined();
    expect(jwtAlgorithm(`${segment({ alg: 5 })}.e30.sig`)).toBeUndefined();
  });
});
