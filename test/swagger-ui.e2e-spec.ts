import type { Browser } from 'playwright-core';
import { P } from './support/api';
import {
  launchBrowser,
  recordPolicyRefusals,
  recordResponses,
  serverErrors,
  withText,
} from './support/browser';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

const ME = '#operations-authentication-AuthController_me';

/**
 * The pages Drey serves to people, in Chromium, under the Content-Security-Policy each gets: Swagger UI as a
 * person uses it, ReDoc with its search, and an HTML dashboard with its charts. Each must work with nothing
 * refused: a console error naming the policy fails the test.
 */
describe('Swagger UI, ReDoc and an HTML dashboard in Chromium', () => {
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // Its Authorize dialog with the default settings (which send the OAuth2 client credentials, empty, in a
  // Basic header), then "Try it out" on an endpoint that needs the token.
  it('Swagger UI signs in through Authorize with its default settings, then calls me with the token', async () => {
    const page = await browser.newPage();
    const responses = recordResponses(page);
    const refusals = recordPolicyRefusals(page);
    await page.goto(`${t.url}/docs`);

    await page.click('button.authorize');
    await page.fill('#oauth_username', 'admin');
    await page.fill('#oauth_password', ADMIN_PASSWORD);
    const [login] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`${P}/login`)),
      page.click('button[aria-label="Apply given OAuth2 credentials"]'),
    ]);
    expect(await login.request().headerValue('authorization')).toBe('Basic Og==');
    expect(login.status()).toBe(200);
    // Signed in, the dialog offers to log out of the OAuth2 scheme.
    await page.waitForSelector('button[aria-label="Remove authorization"]');
    await page.click('.modal-ux button.close-modal');

    // "Try it out" on GET me sends the token the dialog obtained.
    await page.click(`${ME} .opblock-summary`);
    await page.click(`${ME} .try-out__btn`);
    const [me] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`${P}/me`)),
      page.click(`${ME} .execute`),
    ]);
    expect(me.status()).toBe(200);
    expect(await me.request().headerValue('authorization')).toMatch(/^Bearer \S+$/);
    expect(await me.json()).toMatchObject({ username: 'admin', is_admin: true });
    expect(serverErrors(responses)).toEqual([]);
    expect(refusals).toEqual([]);
    await page.close();
  });

  it.each(['/docs', `${P}/docs`])('Swagger UI draws the document at %s', async (path) => {
    const page = await browser.newPage();
    const refusals = recordPolicyRefusals(page);
    // Its scripts come compressed with brotli, which Chromium asks for (compression.e2e checks the bytes).
    const codings = new Map<string, string | null>();
    page.on('response', (response) => {
      const name = /[^/]+\.(?:js|css)$/.exec(new URL(response.url()).pathname)?.[0];
      if (name) codings.set(name, response.headers()['content-encoding'] ?? null);
    });
    await page.goto(`${t.url}${path}`);
    await page.waitForSelector(ME);
    expect(refusals).toEqual([]);
    expect(Object.fromEntries(codings)).toEqual({
      'swagger-ui.css': 'br',
      'swagger-ui-bundle.js': 'br',
      'swagger-ui-standalone-preset.js': 'br',
      'swagger-ui-init.js': 'br',
    });
    await page.close();
  });

  it.each(['/redoc', `${P}/redoc`])(
    'ReDoc draws the document at %s and searches it',
    async (path) => {
      const page = await browser.newPage();
      const refusals = recordPolicyRefusals(page);
      await page.goto(`${t.url}${path}`);
      await page.waitForSelector(withText('h1', 'Drey: Expenses'));
      // The search runs in a worker made from a blob: URL, which the policy must allow.
      await page.fill('input[aria-label="Search"]', 'login');
      await page.waitForSelector('[data-role="search:results"] li');
      expect(refusals).toEqual([]);
      await page.close();
    },
  );

  it('draws an HTML dashboard with its charts', async () => {
    const page = await browser.newPage();
    const refusals = recordPolicyRefusals(page);
    await page.goto(`${t.url}${P}/dashboards/expenses_report/results`);
    // The layout's script says it is done once Chart.js has drawn the charts.
    await page.waitForFunction(
      () => (globalThis as { __dreyReady?: boolean }).__dreyReady === true,
    );
    expect(await page.locator('canvas').count()).toBeGreaterThan(0);
    const drawn = await page.evaluate(
      () =>
        Object.keys((globalThis as { Chart?: { instances: object } }).Chart?.instances ?? {})
          .length,
    );
    expect(drawn).toBeGreaterThan(0);
    expect(refusals).toEqual([]);
    await page.close();
  });
});
