import { Api, P } from './support/api';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';
import { CLIENT_REDIRECT, signInWithSdk } from './support/mcp-oauth';
import { loopbackCertificate, serveJsonDocument } from './support/https-document';
import {
  CookieJar,
  REDIRECT_URI,
  authorize,
  authorizeUrl,
  browse,
  pkce,
  register,
  tokenRequest,
} from './support/oauth-flow';

/** A tools/call of dataset_rows at `path`, with `token`: its status and body. */
async function mcpCall(base: string, path: string, token: string) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'dataset_rows', arguments: { dataset: 'expense_transactions', limit: 1 } },
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Two servers for the whole file (each start costs seconds of CI): `t`, where registrations are many and a
 * client's metadata document may be on loopback (the test serves one, with a certificate Node is told to
 * trust); `strict`, with the defaults' guard on loopback documents and two registrations an hour.
 */
let t: TestServer;
let strict: TestServer;
const tls = loopbackCertificate();
let document: Awaited<ReturnType<typeof serveJsonDocument>>;

beforeAll(async () => {
  document = await serveJsonDocument(tls, '/assistant/client.json', (url) => ({
    client_id: url,
    client_name: 'Metadata document assistant',
    redirect_uris: [CLIENT_REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }));
  [t, strict] = await Promise.all([
    startServer({
      OAUTH_SERVER: 'true',
      OAUTH_REGISTRATIONS_PER_HOUR: '1000',
      OAUTH_CIMD_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: tls.certFile,
    }),
    startServer({
      OAUTH_SERVER: 'true',
      OAUTH_REGISTRATIONS_PER_HOUR: '2',
      NODE_EXTRA_CA_CERTS: tls.certFile,
    }),
  ]);
  // Two servers start at once: on a loaded machine that takes longer than a hook's minute.
}, 120_000);
afterAll(async () => {
  await Promise.all([t?.close(), strict?.close(), document?.close()]);
  tls.remove();
});

describe("Drey's authorization server (OAUTH_SERVER)", () => {
  let api: Api;
  let resource: string;

  beforeAll(() => {
    api = new Api(t.url);
    resource = `${t.url}/mcp`;
  });

  /** The client's refresh token exchanged for new tokens (RFC 6749 §6), for the MCP endpoint. */
  function refresh(clientId: string, refreshToken: string) {
    return tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
      resource,
    });
  }

  /** A client registered, signed in as admin with consent, and its first tokens. */
  async function signedIn(options: { resource?: string } = {}) {
    const clientId = await register(t.url);
    const { verifier, challenge } = pkce();
    const target = options.resource ?? resource;
    const { callback, pages } = await authorize(t.url, {
      clientId,
      challenge,
      resource: target,
      password: ADMIN_PASSWORD,
    });
    const code = callback.searchParams.get('code');
    expect(code).toEqual(expect.any(String));
    const tokens = await tokenRequest(t.url, {
      grant_type: 'authorization_code',
      code: code as string,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: target,
    });
    expect(tokens.status).toBe(200);
    return { clientId, pages, tokens: tokens.body };
  }

  it('publishes its metadata at RFC 8414’s address and OpenID’s, PKCE S256 only', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const { status, body } = await api.get(path);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        issuer: t.url,
        authorization_endpoint: `${t.url}/oauth/authorize`,
        token_endpoint: `${t.url}/oauth/token`,
        registration_endpoint: `${t.url}/oauth/register`,
        revocation_endpoint: `${t.url}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
        client_id_metadata_document_supported: true,
      });
    }
  });

  it('signs a person in on its own pages and gives the client a token for the MCP endpoint only', async () => {
    const { pages, tokens } = await signedIn();
    expect(pages).toEqual(['Sign in to Expenses', 'Allow access to Expenses']);
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'mcp' });
    const called = await mcpCall(t.url, '/mcp', tokens.access_token);
    expect(called.status).toBe(200);
    expect(called.body.result).toMatchObject({ structuredContent: { total_rows: 1000 } });
    // Bound to the endpoint it was asked for (RFC 8707): not the other path, not a REST route.
    const other = await mcpCall(t.url, `${P}/mcp`, tokens.access_token);
    expect(other.status).toBe(401);
    expect(other.body).toMatchObject({ error: 'invalid_token' });
    const rest = await api.get(`${P}/datasets/expense_transactions/results`, tokens.access_token);
    expect(rest.status).toBe(401);
    expect(rest.body.message).toContain('MCP endpoint');
  });

  it('lists a person’s grants with the client and last use; the person or an administrator ends them', async () => {
    const admin = await api.adminToken();
    const { clientId, tokens } = await signedIn();
    expect((await mcpCall(t.url, '/mcp', tokens.access_token)).status).toBe(200);
    const listed = await api.get(`${P}/grants`, admin);
    expect(listed.status).toBe(200);
    const grant = (listed.body as Record<string, unknown>[]).find(
      (row) => row.client_id === clientId,
    );
    expect(grant).toMatchObject({
      username: 'admin',
      client_name: 'Test assistant',
      client_origin: '127.0.0.1:9',
      created_at: expect.any(String),
      last_used_at: expect.any(String),
    });
    // Another user sees none of them, and cannot end them.
    const other = await api.userToken(admin, 'grants-user', { role: 'employee' });
    expect((await api.get(`${P}/grants`, other)).body).toEqual([]);
    expect((await api.get(`${P}/grants?username=admin`, other)).status).toBe(403);
    const refused = await api.request('DELETE', `${P}/grants/${grant?.grant_id as string}`, {
      token: other,
    });
    expect(refused.status).toBe(404);
    expect((await mcpCall(t.url, '/mcp', tokens.access_token)).status).toBe(200);
    // The owner ends it: the assistant's next call is refused, and the end is audited.
    const ended = await api.request('DELETE', `${P}/grants/${grant?.grant_id as string}`, {
      token: admin,
    });
    expect(ended.status).toBe(200);
    expect((await mcpCall(t.url, '/mcp', tokens.access_token)).status).toBe(401);
    const afterEnd = await refresh(clientId, tokens.refresh_token as string);
    expect(afterEnd.body.error).toBe('invalid_grant');
    const audit = await api.get(`${P}/audit?actor=admin&limit=50`, admin);
    const actions = (audit.body.events as { action: string; target: string }[])
      .filter((event) => event.target === clientId)
      .map((event) => event.action);
    expect(actions).toEqual(
      expect.arrayContaining(['oauth_sign_in', 'oauth_consent', 'oauth_token', 'oauth_revoke']),
    );
  });

  it('lets an administrator list and end another user’s grants', async () => {
    const admin = await api.adminToken();
    const clientId = await register(t.url);
    const { verifier, challenge } = pkce();
    await api.userToken(admin, 'granting-user', { role: 'employee' });
    const { callback } = await authorize(t.url, {
      clientId,
      challenge,
      resource,
      username: 'granting-user',
      password: 'granting-user-password',
    });
    const tokens = await tokenRequest(t.url, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') as string,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    });
    const listed = await api.get(`${P}/grants?username=granting-user`, admin);
    expect(listed.body).toHaveLength(1);
    const [grant] = listed.body as { grant_id: string }[];
    expect((await mcpCall(t.url, '/mcp', tokens.body.access_token)).status).toBe(200);
    expect(
      (await api.request('DELETE', `${P}/grants/${grant.grant_id}`, { token: admin })).status,
    ).toBe(200);
    expect((await mcpCall(t.url, '/mcp', tokens.body.access_token)).status).toBe(401);
  });

  it('refuses a resource that is not its own MCP endpoint', async () => {
    const clientId = await register(t.url);
    const { challenge } = pkce();
    const { callback } = await authorize(t.url, {
      clientId,
      challenge,
      resource: 'https://elsewhere.example/mcp',
      password: ADMIN_PASSWORD,
    }).catch(() => ({ callback: new URL(`${REDIRECT_URI}?error=refused`) }));
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('error')).toEqual(expect.any(String));
  });

  it('refuses an authorization request without PKCE', async () => {
    const clientId = await register(t.url);
    const { callback } = await authorize(t.url, {
      clientId,
      resource,
      password: ADMIN_PASSWORD,
    });
    expect(callback.searchParams.get('error')).toBe('invalid_request');
  });

  it('rotates refresh tokens, and a refresh token used twice ends the grant', async () => {
    const { clientId, tokens } = await signedIn();
    const refreshed = await refresh(clientId, tokens.refresh_token as string);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpCall(t.url, '/mcp', refreshed.body.access_token)).status).toBe(200);
    const reused = await refresh(clientId, tokens.refresh_token as string);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await mcpCall(t.url, '/mcp', refreshed.body.access_token)).status).toBe(401);
  });

  it('revokes a token (RFC 7009): the next call is refused', async () => {
    const { clientId, tokens } = await signedIn();
    expect((await mcpCall(t.url, '/mcp', tokens.access_token)).status).toBe(200);
    const revoked = await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.access_token, client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    expect((await mcpCall(t.url, '/mcp', tokens.access_token)).status).toBe(401);
  });

  it('remembers consent per person and client: the second sign-in asks for the password only', async () => {
    const clientId = await register(t.url);
    const first = await authorize(t.url, {
      clientId,
      challenge: pkce().challenge,
      resource,
      password: ADMIN_PASSWORD,
    });
    expect(first.pages).toEqual(['Sign in to Expenses', 'Allow access to Expenses']);
    const second = await authorize(t.url, {
      clientId,
      challenge: pkce().challenge,
      resource,
      password: ADMIN_PASSWORD,
    });
    expect(second.pages).toEqual(['Sign in to Expenses']);
    expect(second.callback.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('sends the browser back with access_denied when the person denies access, audited', async () => {
    const clientId = await register(t.url, 'Denied assistant');
    const { callback } = await authorize(t.url, {
      clientId,
      challenge: pkce().challenge,
      resource,
      password: ADMIN_PASSWORD,
      decision: 'deny',
    });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const admin = await api.adminToken();
    const audit = await api.get(`${P}/audit?action=oauth_consent&actor=admin`, admin);
    expect(audit.body.events[0]).toMatchObject({ target: clientId, outcome: 'failure' });
  });

  it('answers a wrong password on its page, counted by the login lockout', async () => {
    const admin = await api.adminToken();
    await api.userToken(admin, 'oauth-user', { role: 'employee' });
    const clientId = await register(t.url);
    const jar = new CookieJar();
    const start = await browse(jar, authorizeUrl(t.url, clientId, resource));
    const page = new URL(start.headers.get('location') as string, t.url).href;
    let last: Response | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      last = await browse(jar, `${page}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: 'oauth-user', password: 'wrong-password' }),
      });
      const html = await last.text();
      expect(html).toContain('id="error"');
      if (attempt < 5) expect(last.status).toBe(401);
    }
    // Past LOGIN_MAX_FAILURES (5), the page says to wait, as the login endpoint answers 429.
    expect(last?.status).toBe(429);
  });

  it('refuses another site’s form posting a step: the sign-in cookie is SameSite=Lax', async () => {
    const clientId = await register(t.url);
    const jar = new CookieJar();
    const start = await browse(jar, authorizeUrl(t.url, clientId, resource));
    const cookies = start.headers.getSetCookie().join('\n');
    expect(cookies).toMatch(/_interaction=[^\n]*samesite=lax/i);
    expect(cookies).toMatch(/_interaction=[^\n]*httponly/i);
    // Without the browser's cookie (what a cross-site POST would carry under Lax), the step is refused.
    const page = new URL(start.headers.get('location') as string, t.url).href;
    const forged = await fetch(`${page}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD }),
      redirect: 'manual',
    });
    expect(forged.status).toBe(400);
  });
});

describe('assistants signing in through the MCP SDKs (OAUTH_SERVER)', () => {
  it('answers an MCP request without a credential 401, naming its Protected Resource Metadata', async () => {
    const response = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(
      `resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(challenge).toContain('scope="mcp"');
    const metadata = await new Api(t.url).get('/.well-known/oauth-protected-resource/mcp');
    expect(metadata.body).toMatchObject({
      resource: `${t.url}/mcp`,
      authorization_servers: [t.url],
      scopes_supported: ['mcp'],
    });
  });

  it('serves an assistant that names the server localhost as one that names it 127.0.0.1', async () => {
    const client = await signInWithSdk('v2', `${t.url.replace('127.0.0.1', 'localhost')}/mcp`, {
      password: ADMIN_PASSWORD,
    });
    try {
      expect((await client.callTool('catalog', {})).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

describe('clients identified by their metadata document (CIMD)', () => {
  it('shows the client on the sign-in page by its document’s origin', async () => {
    const query = new URLSearchParams({
      client_id: document.url,
      redirect_uri: CLIENT_REDIRECT,
      response_type: 'code',
      scope: 'mcp',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      resource: `${t.url}/mcp`,
    });
    const jar = new CookieJar();
    const start = await browse(jar, `${t.url}/oauth/authorize?${query.toString()}`);
    const page = await browse(jar, new URL(start.headers.get('location') as string, t.url).href);
    const html = await page.text();
    expect(html).toContain('Metadata document assistant');
    expect(html).toContain(`<span id="client-origin">${new URL(document.url).host}</span>`);
  });

  it('does not fetch a document from a loopback address unless told to (SSRF guard)', async () => {
    const before = document.fetched();
    const query = new URLSearchParams({
      client_id: document.url,
      redirect_uri: CLIENT_REDIRECT,
      response_type: 'code',
      scope: 'mcp',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      resource: `${strict.url}/mcp`,
    });
    const response = await fetch(`${strict.url}/oauth/authorize?${query.toString()}`, {
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('invalid_client');
    expect(document.fetched()).toBe(before);
  });
});

describe('registration bounds', () => {
  it('lets an address register so many clients an hour, then answers 429 with Retry-After', async () => {
    await register(strict.url);
    await register(strict.url);
    const third = await fetch(`${strict.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await third.json()).toMatchObject({ error: 'invalid_request' });
  });
});
