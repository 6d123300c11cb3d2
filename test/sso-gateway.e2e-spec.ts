import { createHash, randomBytes } from 'node:crypto';
import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Api, P } from './support/api';
import { launchBrowser, step } from './support/browser';
import { Gateway, OidcProvider, startGateway, startOidcProvider } from './support/sso-gateway';
import { TestServer, startServer } from './support/server';
import { freePort } from './support/services';

/**
 * deploy/sso as shipped: Apache httpd with mod_auth_openidc signs people in at a real OpenID Provider
 * (oidc-provider) and hands Drey the identity in trusted headers; the same provider's access tokens work
 * against Drey directly.
 */
describe('single sign-on through the Apache gateway (deploy/sso)', () => {
  const HEADER_SECRET = randomBytes(24).toString('hex');
  const AUDIENCE = 'drey';
  const RESOURCE = 'urn:drey:api';
  const GATEWAY_CLIENT = { id: 'drey-gateway', secret: randomBytes(24).toString('hex') };
  const CLI_CLIENT = { id: 'drey-cli', secret: randomBytes(24).toString('hex') };
  const USERS = {
    alice: {
      password: 'alice-wonderland-7',
      name: 'Alice Adams',
      groups: ['drey-admins', 'finance-managers'],
    },
    bob: { password: 'bob-builder-9', name: 'Bob Brown', groups: ['staff'] },
    // In no group: the provider sends no groups claim, so the gateway has no groups header of its own to set.
    carol: { password: 'carol-singer-3', name: 'Carol Clark' },
  };

  let provider: OidcProvider;
  let t: TestServer;
  let drey: Api;
  let gateway: Gateway;
  let browser: Browser;
  // The command-line client's redirect URI: records what the provider sends back.
  let callback: Server;
  let callbackUrl: string;
  const callbacks: URLSearchParams[] = [];
  const contexts: Record<string, { context: BrowserContext; page: Page }> = {};

  beforeAll(async () => {
    const gatewayPort = await freePort();
    callback = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      callbacks.push(url.searchParams);
      res
        .writeHead(200, { 'Content-Type': 'text/plain' })
        .end('Signed in; return to the terminal.');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;

    provider = await startOidcProvider({
      users: USERS,
      clients: [
        {
          client_id: GATEWAY_CLIENT.id,
          client_secret: GATEWAY_CLIENT.secret,
          redirect_uris: [`http://127.0.0.1:${gatewayPort}/redirect_uri`],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          client_id: CLI_CLIENT.id,
          client_secret: CLI_CLIENT.secret,
          redirect_uris: [callbackUrl],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      resource: { indicator: RESOURCE, audience: AUDIENCE },
    });
    t = await startServer({
      // The gateway connects from here; only it knows the secret.
      SSO_HEADER_PROXIES: '127.0.0.1/32',
      SSO_HEADER_SECRET_NAME: 'X-Proxy-Secret',
      SSO_HEADER_SECRET: HEADER_SECRET,
      OIDC_ISSUER: provider.issuer,
      OIDC_AUDIENCE: AUDIENCE,
      SSO_ADMIN_GROUPS: 'drey-admins',
      SSO_FIELD_MAP: JSON.stringify({ role: { 'finance-managers': 'manager', staff: 'employee' } }),
    });
    drey = new Api(t.url);
    gateway = await startGateway({
      DREY_UPSTREAM: t.url,
      OIDC_METADATA_URL: `${provider.issuer}/.well-known/openid-configuration`,
      OIDC_CLIENT_ID: GATEWAY_CLIENT.id,
      OIDC_CLIENT_SECRET: GATEWAY_CLIENT.secret,
      OIDC_CRYPTO_PASSPHRASE: randomBytes(32).toString('hex'),
      SSO_HEADER_SECRET: HEADER_SECRET,
      GATEWAY_PORT: gatewayPort,
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await t?.close();
    await provider?.stop();
    await new Promise((resolve) => (callback ? callback.close(resolve) : resolve(undefined)));
  });

  /** Fills in the provider's login form on the page and submits it. */
  async function submitLogin(page: Page, username: string, password: string): Promise<void> {
    await page.fill('#username', username);
    await page.fill('#password', password);
    await page.click('#sign-in');
  }

  /**
   * Opens `${P}/me` through the gateway in a fresh browser context, signs in at the provider and returns
   * Drey's answer once the provider has sent the browser back.
   */
  async function signInThroughGateway(username: keyof typeof USERS) {
    const context = await browser.newContext();
    const page = await context.newPage();
    contexts[username] = { context, page };
    const meUrl = `${gateway.url}${P}/me`;
    return step(page, `sso-gateway-sign-in-${username}`, async () => {
      await page.goto(meUrl);
      expect(page.url()).toContain(`${provider.issuer}/interaction/`);
      expect(await page.textContent('h1')).toBe(`Sign in to ${GATEWAY_CLIENT.id}`);
      const back = page.waitForResponse((response) => response.url() === meUrl);
      await submitLogin(page, username, USERS[username].password);
      const response = await back;
      expect(page.url()).toBe(meUrl);
      return {
        status: response.status(),
        body: (await response.json()) as Record<string, unknown>,
      };
    });
  }

  /**
   * A request with the signed-in browser's session cookie, as the page's own scripts would make it. Sent
   * through Playwright's request context, which shares the browser's cookies: a fetch() run inside the page
   * (a JSON document of the API) is refused by that document's Content-Security-Policy, `default-src 'none'`.
   */
  async function fetchFrom(
    page: Page,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any }> {
    const response = await page.context().request.get(new URL(path, page.url()).toString(), {
      headers,
    });
    return { status: response.status(), body: await response.json() };
  }

  it('sends a caller without a session to the provider, whatever identity it claims', async () => {
    const claim = {
      'X-Forwarded-User': 'alice',
      'X-Forwarded-Groups': 'drey-admins',
      'X-Proxy-Secret': HEADER_SECRET,
    };
    const context = await browser.newContext({ extraHTTPHeaders: claim });
    const page = await context.newPage();
    await step(page, 'sso-gateway-no-session', async () => {
      const authorize = page.waitForRequest((request) =>
        request.url().startsWith(`${provider.issuer}/auth?`),
      );
      await page.goto(`${gateway.url}${P}/me`);
      const query = new URL((await authorize).url()).searchParams;
      expect(query.get('client_id')).toBe(GATEWAY_CLIENT.id);
      expect(query.get('scope')?.split(' ')).toContain('groups');
      expect(page.url()).toContain(`${provider.issuer}/interaction/`);
    });
    await context.close();
    // A script is not sent to a login page: the gateway answers 401 itself (Drey's answers carry an id).
    const reply = await fetch(`${gateway.url}${P}/me`, { redirect: 'manual', headers: claim });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('x-request-id')).toBeNull();
  });

  it('signs alice in at the provider and shows Drey as alice: admin by group, role mapped', async () => {
    const me = await signInThroughGateway('alice');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ username: 'alice', is_admin: true, role: 'manager' });
    // The gateway named her to Apache too (its access log's user column).
    expect(gateway.accessLog()).toMatch(new RegExp(`alice "GET ${P}/me `));
  });

  it('lists the data catalog through the gateway as alice sees it', async () => {
    const { page } = contexts.alice;
    const response = await page.goto(`${gateway.url}${P}/data-catalog`);
    expect(response?.status()).toBe(200);
    const catalog = (await response?.json()) as { datasets: { name: string }[]; models: unknown[] };
    // An administrator's catalog: every dataset, the admin-only one included, and the models.
    expect(catalog.datasets.map((dataset) => dataset.name)).toEqual([
      'expenses_by_month',
      'expenses_grouped',
      'expense_transactions',
    ]);
    expect(catalog.models.length).toBeGreaterThan(0);
  });

  it('checks the password, then signs bob in with his own session: no admin, role from his group', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await step(page, 'sso-gateway-wrong-password', async () => {
      await page.goto(`${gateway.url}${P}/me`);
      await submitLogin(page, 'bob', 'not-his-password');
      await page.waitForSelector('#error');
      expect(await page.textContent('#error')).toBe('Wrong user name or password.');
      expect(page.url()).toContain(`${provider.issuer}/interaction/`);
    });
    await context.close();

    const me = await signInThroughGateway('bob');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ username: 'bob', is_admin: false, role: 'employee' });
    const catalog = await fetchFrom(contexts.bob.page, `${P}/data-catalog`);
    expect(catalog.status).toBe(200);
    expect(catalog.body.datasets.map((dataset: { name: string }) => dataset.name)).toEqual([
      'expenses_by_month',
      'expenses_grouped',
    ]);
  });

  it('replaces identity headers a signed-in browser sends itself', async () => {
    const asAlice = await fetchFrom(contexts.alice.page, `${P}/me`, {
      'X-Forwarded-User': 'bob',
      'X-Forwarded-Groups': 'staff',
      'X-Proxy-Secret': 'a-guess',
    });
    expect(asAlice).toEqual({
      status: 200,
      body: { username: 'alice', is_admin: true, role: 'manager' },
    });
    const asBob = await fetchFrom(contexts.bob.page, `${P}/me`, {
      'X-Forwarded-User': 'alice',
      'X-Forwarded-Groups': 'drey-admins,finance-managers',
      'X-Forwarded-Email': 'alice@example.org',
    });
    expect(asBob).toEqual({
      status: 200,
      body: { username: 'bob', is_admin: false, role: 'employee' },
    });
    // Without a groups claim only the gateway's removal keeps a groups header of the browser's from Drey.
    const carol = await signInThroughGateway('carol');
    expect(carol.body).toEqual({ username: 'carol', is_admin: false, role: 'employee' });
    const asCarol = await fetchFrom(contexts.carol.page, `${P}/me`, {
      'X-Forwarded-Groups': 'drey-admins,finance-managers',
    });
    expect(asCarol).toEqual({
      status: 200,
      body: { username: 'carol', is_admin: false, role: 'employee' },
    });
  });

  it('ignores identity headers sent to Drey directly, around the gateway', async () => {
    const claim = { 'X-Forwarded-User': 'alice', 'X-Forwarded-Groups': 'drey-admins' };
    for (const headers of [claim, { ...claim, 'X-Proxy-Secret': 'a-guess' }]) {
      const reply = await drey.get(`${P}/me`, undefined, headers);
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('authentication_required');
    }
    // The same headers with the gateway's secret are believed: the secret is what keeps callers on
    // Drey's own port from naming themselves.
    const withSecret = await drey.get(`${P}/me`, undefined, {
      ...claim,
      'X-Proxy-Secret': HEADER_SECRET,
    });
    expect(withSecret.body).toEqual({ username: 'alice', is_admin: true, role: 'employee' });
  });

  it("accepts the provider's access token for Drey's audience directly (OIDC bearer)", async () => {
    // The authorization code flow of a command-line client, with PKCE and Drey as the resource.
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('hex');
    const authorize = new URL(`${provider.issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: CLI_CLIENT.id,
      response_type: 'code',
      scope: 'openid profile groups api',
      redirect_uri: callbackUrl,
      resource: RESOURCE,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const context = await browser.newContext();
    const page = await context.newPage();
    await step(page, 'sso-gateway-cli-sign-in', async () => {
      await page.goto(authorize.toString());
      await submitLogin(page, 'alice', USERS.alice.password);
      await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    });
    await context.close();
    const answer = callbacks.at(-1);
    expect(answer?.get('state')).toBe(state);
    const code = answer?.get('code');
    expect(code).toBeTruthy();

    const tokenReply = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code ?? '',
        redirect_uri: callbackUrl,
        code_verifier: verifier,
        resource: RESOURCE,
        client_id: CLI_CLIENT.id,
        client_secret: CLI_CLIENT.secret,
      }),
    });
    const tokens = (await tokenReply.json()) as Record<string, string>;
    expect(tokenReply.status).toBe(200);
    const accessToken = tokens.access_token;
    // A JWT for Drey's audience, signed by the provider: what Drey's bearer mode verifies.
    const payload = JSON.parse(
      Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    expect(payload).toMatchObject({ iss: provider.issuer, aud: AUDIENCE, sub: 'alice' });

    const me = await drey.get(`${P}/me`, accessToken);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ username: 'alice', is_admin: true, role: 'manager' });
    // A token that is not the provider's (its signature altered) is refused.
    const forged = `${accessToken.slice(0, -4)}${accessToken.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const refused = await drey.get(`${P}/me`, forged);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_token');
  });
});
