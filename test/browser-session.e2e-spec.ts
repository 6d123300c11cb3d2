import { IncomingMessage, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { Api, P } from './support/api';
import { launchBrowser } from './support/browser';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

const DASHBOARD = `${P}/dashboards/expenses_dashboard/results`;
const NAVIGATION = { 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' };

describe('a person opening a protected dashboard in a browser', () => {
  let t: TestServer;
  let api: Api;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startServer(), launchBrowser()]);
    api = new Api(t.url);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), t?.close()]);
  });

  /** The sign-in page's form posted as admin, asking to go back to `returnTo` (the redirect not followed). */
  function signIn(returnTo: string) {
    return fetch(`${t.url}/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        username: 'admin',
        password: ADMIN_PASSWORD,
        return_to: returnTo,
      }),
      redirect: 'manual',
    });
  }

  it('signs in on the sign-in page and comes back to the dashboard, then signs out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${t.url}${DASHBOARD}?start_date=2024-01-01`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await page.waitForSelector('#username');
      await page.keyboard.type('admin');
      await page.keyboard.press('Tab');
      await page.keyboard.type(ADMIN_PASSWORD);
      const back = page.waitForResponse((response) => response.url().includes(DASHBOARD));
      await page.keyboard.press('Enter');
      const dashboard = await back;
      await page.waitForURL((url) => url.pathname === DASHBOARD);
      expect(dashboard.status()).toBe(200);
      expect(dashboard.headers()['content-type']).toBe('image/png');
      expect(new URL(page.url()).search).toBe('?start_date=2024-01-01');
      const [cookie] = (await context.cookies()).filter((one) => one.name === 'drey_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(cookie.expires).toBeGreaterThan(Date.now() / 1000);
      // Signing out ends the session: the next visit asks to sign in again.
      await page.goto(`${t.url}/sign-out`);
      await page.click('#sign-out');
      await page.waitForSelector('#signed-out');
      await page.goto(`${t.url}${DASHBOARD}`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
    } finally {
      await context.close();
    }
  });

  it('accepts the session on a safe GET of a dashboard only, never on a write or another route', async () => {
    const signedIn = await signIn(DASHBOARD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(DASHBOARD);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0];
    expect(cookie).toMatch(/^drey_session=\S+/);
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}${path}`, { headers: { cookie, ...headers }, redirect: 'manual' });
    expect((await get(DASHBOARD)).status).toBe(200);
    // The legacy layout's page of the same dashboard too.
    expect((await get('/service-v0/expenses/v1/dashboard/expenses_dashboard')).status).toBe(200);
    expect((await get(`${P}/me`)).status).toBe(401);
    expect((await get(`${P}/datasets/expense_transactions/results`)).status).toBe(401);
    const post = await fetch(`${t.url}${DASHBOARD}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(post.status).toBe(401);
    const tokens = await fetch(`${t.url}${P}/tokens`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'made with a cookie' }),
    });
    expect(tokens.status).toBe(401);
  });

  it('sends a browser’s navigation to the sign-in page, and any other request the layout’s 401', async () => {
    expect((await api.get(DASHBOARD)).status).toBe(401);
    // A browser's navigation, over node:http: fetch does not send Sec- headers, which only browsers set.
    const navigation = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${t.url}${DASHBOARD}`, { headers: NAVIGATION }, resolve).on('error', reject),
    );
    navigation.resume();
    expect(navigation.statusCode).toBe(303);
    expect(navigation.headers.location).toBe(`/sign-in?return_to=${encodeURIComponent(DASHBOARD)}`);
  });

  it('never sends the browser back anywhere but a dashboard of this service', async () => {
    for (const returnTo of [
      'https://evil.example/',
      '//evil.example/x',
      `${P}/me`,
      '/\\evil.example',
    ]) {
      const signedIn = await signIn(returnTo);
      expect({ returnTo, status: signedIn.status }).toEqual({ returnTo, status: 200 });
      expect(signedIn.headers.get('location')).toBeNull();
    }
  });

  it('lets no other site use the session: its form and its script get nothing', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Another site (another host name), which the person visits while signed in.
    const site = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(`<!doctype html><form id="f" method="post" action="${t.url}${P}/tokens" enctype="text/plain">
<input name='{"title":"stolen","x":"' value='"}'></form>
<script>
fetch(${JSON.stringify(`${t.url}${DASHBOARD}`)}, { credentials: 'include' })
  .then((r) => (document.title = 'fetched ' + r.status))
  .catch(() => (document.title = 'refused'));
</script>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
    try {
      await page.goto(`${t.url}/sign-in`);
      await page.fill('#username', 'admin');
      await page.fill('#password', ADMIN_PASSWORD);
      await page.click('#sign-in');
      await page.waitForSelector('#username');
      await page.goto(siteUrl);
      await page.waitForFunction("document.title !== ''");
      expect(await page.title()).toBe('refused');
      await page.evaluate('document.getElementById("f").submit()');
      await page.waitForLoadState();
      const admin = await api.adminToken();
      const named = await api.get(`${P}/tokens`, admin);
      expect((named.body as { title: string }[]).map((token) => token.title)).not.toContain(
        'stolen',
      );
    } finally {
      await context.close();
      site.close();
    }
  });
});
