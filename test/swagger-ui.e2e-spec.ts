import type { Browser } from 'playwright-core';
import { P } from './support/api';
import { launchBrowser, recordResponses, serverErrors } from './support/browser';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

const ME = '#operations-authentication-AuthController_me';

/**
 * Swagger UI as a person uses it: its Authorize dialog with the default settings (which send the OAuth2
 * client credentials, empty, in a Basic header), then "Try it out" on an endpoint that needs the token.
 */
describe('Swagger UI in Chromium', () => {
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in through Authorize with its default settings, then calls me with the token', async () => {
    const page = await browser.newPage();
    const responses = recordResponses(page);
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
  });
});
