import { Api, P } from './support/api';
import { TestIdp } from './support/idp';
import { TestServer, startServer } from './support/server';

const AUDIENCE = 'drey-api';
const now = () => Math.floor(Date.now() / 1000);

describe('single sign-on: OIDC bearer tokens', () => {
  const idp = new TestIdp();
  let t: TestServer;
  let api: Api;
  let claims: (extra?: Record<string, unknown>) => Record<string, unknown>;

  beforeAll(async () => {
    idp.addKey('rsa-1', 'RS256');
    idp.addKey('ec-1', 'ES256');
    const issuer = await idp.start();
    claims = (extra = {}) => ({
      iss: issuer,
      aud: AUDIENCE,
      exp: now() + 300,
      iat: now(),
      preferred_username: 'sso_alice',
      groups: ['finance-managers'],
      ...extra,
    });
    t = await startServer({
      OIDC_ISSUER: issuer,
      OIDC_AUDIENCE: AUDIENCE,
      OIDC_JWKS_COOLDOWN_S: '0',
      SSO_ADMIN_GROUPS: 'drey-admins',
      SSO_FIELD_MAP: JSON.stringify({ role: { 'finance-managers': 'manager', staff: 'employee' } }),
    });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
    await idp.stop();
  });

  it('accepts a token of the issuer and audience and maps its claims', async () => {
    const reply = await api.get(`${P}/me`, idp.token(claims()));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ username: 'sso_alice', is_admin: false, role: 'manager' });
    expect(reply.headers.get('applied-username')).toBe('sso_alice');
    const ec = await api.get(
      `${P}/me`,
      idp.token(claims({ preferred_username: 'sso_bob', groups: ['staff'] }), 'ec-1'),
    );
    expect(ec.body).toEqual({ username: 'sso_bob', is_admin: false, role: 'employee' });
  });

  it('accepts an audience list that contains ours', async () => {
    const token = idp.token(claims({ aud: ['other', AUDIENCE] }));
    expect((await api.get(`${P}/me`, token)).status).toBe(200);
  });

  it('follows the groups on every request, including admin rights', async () => {
    const admin = idp.token(claims({ preferred_username: 'sso_carol', groups: ['drey-admins'] }));
    expect((await api.get(`${P}/me`, admin)).body).toEqual({
      username: 'sso_carol',
      is_admin: true,
      role: 'employee',
    });
    const created = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'made_by_sso', password: 'made-by-sso-pw' },
    });
    expect(created.status).toBe(200);
    const demoted = idp.token(claims({ preferred_username: 'sso_carol', groups: [] }));
    expect((await api.get(`${P}/me`, demoted)).body.is_admin).toBe(false);
    const refused = await api.request('POST', `${P}/users`, {
      token: demoted,
      json: { username: 'nope', password: 'nope-password' },
    });
    expect(refused.status).toBe(403);
  });

  it.each([
    ['a wrong issuer', () => idp.token(claims({ iss: 'https://evil.example' }))],
    ['a wrong audience', () => idp.token(claims({ aud: 'someone-else' }))],
    ['an expired token', () => idp.token(claims({ exp: now() - 120 }))],
    ['a token not valid yet', () => idp.token(claims({ nbf: now() + 600 }))],
    ['a token without exp', () => idp.token({ ...claims(), exp: undefined })],
    [
      'a token without a username claim',
      () => idp.token(claims({ preferred_username: undefined })),
    ],
    [
      'a username that storage cannot hold',
      () => idp.token(claims({ preferred_username: 'nul\u0000name' })),
    ],
    ['an unknown key id', () => idp.token(claims(), 'rsa-1', { kid: 'unknown-kid' })],
    ['alg none', () => idp.algNone(claims())],
    ['HS256 signed with the public key', () => idp.hs256WithPublicKey(claims())],
    ['a key embedded in the header', () => idp.withEmbeddedKey(claims())],
    ['the name of a local password user', () => idp.token(claims({ preferred_username: 'admin' }))],
  ])('refuses %s with 401 invalid_token', async (_, make) => {
    const reply = await api.get(`${P}/me`, make());
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe('invalid_token');
    expect(reply.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('allows the configured clock skew', async () => {
    expect((await api.get(`${P}/me`, idp.token(claims({ exp: now() - 30 })))).status).toBe(200);
  });

  it('fetches the JWKS again when a token names a new key (rotation)', async () => {
    const before = idp.jwksFetches;
    idp.addKey('rsa-2', 'RS256');
    const reply = await api.get(`${P}/me`, idp.token(claims(), 'rsa-2'));
    expect(reply.status).toBe(200);
    expect(idp.jwksFetches).toBeGreaterThan(before);
  });

  it("keeps Drey's own tokens working beside the identity provider's", async () => {
    const own = await api.adminToken();
    expect((await api.get(`${P}/me`, own)).body.username).toBe('admin');
    // An SSO user can have named tokens of Drey's own too.
    const sso = idp.token(claims());
    const named = await api.request('POST', `${P}/tokens`, { token: sso, json: { title: 'cli' } });
    expect(named.status).toBe(200);
    expect((await api.get(`${P}/me`, named.body.access_token)).body.username).toBe('sso_alice');
    // SSO users have no password: the login form refuses them.
    expect(
      (await api.request('POST', `${P}/login`, { form: { username: 'sso_alice', password: '' } }))
        .status,
    ).toBe(400);
    expect(
      (
        await api.request('POST', `${P}/login`, {
          form: { username: 'sso_alice', password: 'guess' },
        })
      ).status,
    ).toBe(401);
  });
});

describe('single sign-on: trusted identity headers', () => {
  const SECRET = 'proxy-shared-secret';
  let t: TestServer;
  let api: Api;
  const headers = (extra: Record<string, string> = {}) => ({
    'X-Forwarded-User': 'hdr_dave',
    'X-Forwarded-Email': 'dave@example.org',
    'X-Forwarded-Groups': 'staff, finance-managers',
    'X-Proxy-Secret': SECRET,
    ...extra,
  });

  beforeAll(async () => {
    t = await startServer({
      SSO_HEADER_PROXIES: '127.0.0.1/32,::1/128',
      SSO_HEADER_SECRET_NAME: 'X-Proxy-Secret',
      SSO_HEADER_SECRET: SECRET,
      SSO_ADMIN_GROUPS: 'drey-admins',
      SSO_FIELD_MAP: JSON.stringify({ role: { 'finance-managers': 'manager' } }),
    });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  it('signs in the user a trusted proxy names, with the mapped role', async () => {
    const reply = await api.get(`${P}/me`, undefined, headers());
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ username: 'hdr_dave', is_admin: false, role: 'manager' });
  });

  it('follows the headers on each request', async () => {
    const reply = await api.get(
      `${P}/me`,
      undefined,
      headers({ 'X-Forwarded-Groups': 'drey-admins' }),
    );
    expect(reply.body).toEqual({ username: 'hdr_dave', is_admin: true, role: 'employee' });
  });

  it('ignores the headers without the secret, or with a wrong one, and logs it', async () => {
    const missing = { ...headers() } as Record<string, string>;
    delete missing['X-Proxy-Secret'];
    for (const h of [missing, headers({ 'X-Proxy-Secret': 'wrong' })]) {
      const reply = await api.get(`${P}/me`, undefined, h);
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('authentication_required');
    }
    expect(
      t.server.logs.some((line) => String(line.msg).includes('identity headers ignored')),
    ).toBe(true);
  });

  it('lets a bearer token take precedence over the headers', async () => {
    const admin = await api.adminToken();
    expect((await api.get(`${P}/me`, admin, headers())).body.username).toBe('admin');
  });

  it('refuses a header identity that names a local password user', async () => {
    expect(
      (await api.get(`${P}/me`, undefined, headers({ 'X-Forwarded-User': 'admin' }))).status,
    ).toBe(401);
  });

  it('ignores the same headers from an address outside the trusted proxies', async () => {
    const other = await t.another({ SSO_HEADER_PROXIES: '10.0.0.0/8' });
    const reply = await new Api(other.url).get(`${P}/me`, undefined, headers());
    expect(reply.status).toBe(401);
    expect(other.logs.some((line) => String(line.msg).includes('not from a trusted proxy'))).toBe(
      true,
    );
    await other.stop();
  });
});
