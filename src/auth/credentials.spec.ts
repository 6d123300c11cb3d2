import type { IncomingMessage } from 'node:http';
import { acceptApiKey, bearerToken, credentialOf, jwtAlgorithm } from '@/auth/credentials';
import { InvalidTokenError } from '@/core/errors';

const requestWith = (authorization?: string, method = 'GET', query: Record<string, unknown> = {}) =>
  ({ method, headers: { authorization }, query }) as unknown as IncomingMessage & {
    query: unknown;
  };
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

  it("says that a bearer value holding spaces is not a token, and when it is a failed login's body", () => {
    const failedLogin =
      'Bearer {"statusCode":401,"error":"invalid_credentials","message":"Incorrect username or password"}';
    expect(() => bearerToken(failedLogin)).toThrow(
      /^The bearer value is a JSON body, not a token: the call that should have given the token failed/,
    );
    expect(() => bearerToken('Bearer a b')).toThrow(
      /^The bearer value is not a token \(a token holds no spaces\)/,
    );
    expect(() => bearerToken('Token a.b.c')).toThrow(
      'The Authorization header must be "Bearer <token>"',
    );
  });

  it('refuses any other shape as an invalid token', () => {
    for (const header of ['Token a.b.c', 'Bearer a b', 'a.b.c', 'Basic Og==']) {
      expect(() => bearerToken(header)).toThrow(InvalidTokenError);
    }
  });
});

describe("the HTTP door's credential", () => {
  it("is the bearer token first, then a GET's x_embed_token, then identity headers", () => {
    expect(credentialOf(requestWith('Bearer x.y.z', 'GET', { x_embed_token: 'e.f.g' }))).toEqual({
      kind: 'bearer',
      token: 'x.y.z',
      request: expect.anything(),
    });
    expect(credentialOf(requestWith(undefined, 'GET', { x_embed_token: 'e.f.g' }))).toEqual({
      kind: 'embed-link',
      token: 'e.f.g',
    });
    expect(credentialOf(requestWith('Bearer')).kind).toBe('identity-headers');
  });

  it('reads x_embed_token from the query of a GET or HEAD only, never of a POST', () => {
    expect(credentialOf(requestWith(undefined, 'HEAD', { x_embed_token: 'e' })).kind).toBe(
      'embed-link',
    );
    expect(credentialOf(requestWith(undefined, 'POST', { x_embed_token: 'e' })).kind).toBe(
      'identity-headers',
    );
    expect(credentialOf(requestWith(undefined, 'GET', { x_embed_token: ['e', 'f'] })).kind).toBe(
      'identity-headers',
    );
  });

  it('refuses a malformed Authorization header whatever else the request carries', () => {
    expect(() => credentialOf(requestWith('Token a', 'GET', { x_embed_token: 'e' }))).toThrow(
      InvalidTokenError,
    );
  });
});

describe('x-api-key', () => {
  const keyed = (key: string | string[] | undefined, authorization?: string, accepted = true) => {
    const request = {
      method: 'POST',
      headers: { authorization, 'x-api-key': key },
      query: {},
    } as unknown as IncomingMessage & { query: unknown };
    if (accepted) acceptApiKey(request);
    return request;
  };

  it('is a credential where the route takes it (the MCP endpoint marks its requests)', () => {
    expect(credentialOf(keyed(' a.b.c '))).toEqual({ kind: 'api-key', token: 'a.b.c' });
  });

  it('is ignored on any other route, as it always was', () => {
    expect(credentialOf(keyed('a.b.c', undefined, false)).kind).toBe('identity-headers');
    expect(credentialOf(keyed('a.b.c', 'Bearer x.y.z', false))).toEqual({
      kind: 'bearer',
      token: 'x.y.z',
      request: expect.anything(),
    });
  });

  it('counts an empty header as none', () => {
    expect(credentialOf(keyed('  ')).kind).toBe('identity-headers');
  });

  it('refuses a key sent with a bearer token, twice, or with spaces inside', () => {
    expect(() => credentialOf(keyed('a.b.c', 'Bearer x.y.z'))).toThrow(
      'Send either Authorization: Bearer or x-api-key, not both',
    );
    expect(() => credentialOf(keyed(['a', 'b']))).toThrow(InvalidTokenError);
    expect(() => credentialOf(keyed('a b'))).toThrow(InvalidTokenError);
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
