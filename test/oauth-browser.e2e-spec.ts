import type { Browser, Page } from 'playwright-core';
import {
  launchBrowser,
  recordPolicyRefusals,
  recordResponses,
  serverErrors,
} from './support/browser';
import { Api } from './support/api';
import { loopbackCertificate, serveJsonDocument } from './support/https-document';
import {
  AssistantCallback,
  MemoryOAuthProvider,
  OAuthClientKind,
  assistantJourney,
  listenAsAssistant,
  signInWithSdk,
} from './support/mcp-oauth';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

/**
 * A person signing an assistant in on Drey's pages in Chromium, with the keyboard only: what the MCP SDK
 * would open in their browser, up to the redirect back to the assistant (`callback`, where the test
 * listens as a desktop assistant does on loopback).
 */
async function signInWithKeyboard(
  page: Page,
  authorizationUrl: string,
  callback: string,
): Promise<URL> {
  await page.goto(authorizationUrl);
  await page.waitForSelector('#username');
  // The user name field has the focus: typed, then the password after a Tab, sent with Enter.
  await page.keyboard.type('admin');
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN_PASSWORD);
  await page.keyboard.press('Enter');
  // The consent page names the client; "Allow" has the focus.
  await page.waitForSelector('#allow');
  const client = await page.textContent('#client');
  expect(client).toContain('Drey test assistant');
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('allow');
  await page.keyboard.press('Enter');
  await page.waitForURL(`${callback}**`);
  return new URL(page.url());
}

describe('signing an assistant in on Drey’s pages in Chromium (OAUTH_SERVER)', () => {
  let t: TestServer;
  let browser: Browser;
  // The assistant's own loopback page, which the browser is sent back to.
  let assistant: AssistantCallback | undefined;
  let callback: string;
  // An assistant identified by its client ID metadata document (CIMD), served over HTTPS on loopback.
  const tls = loopbackCertificate();
  let document: Awaited<ReturnType<typeof serveJsonDocument>>;

  beforeAll(async () => {
    assistant = await listenAsAssistant();
    callback = assistant.callback;
    document = await serveJsonDocument(tls, '/assistant/client.json', (url) => ({
      client_id: url,
      client_name: 'Drey test assistant (metadata document)',
      redirect_uris: [callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }));
    [t, browser] = await Promise.all([
      // Loopback documents are let through for this test only, and the test's certificate trusted.
      startServer({
        OAUTH_SERVER: 'true',
        OAUTH_REGISTRATIONS_PER_HOUR: '1000',
        OAUTH_CIMD_ALLOW_LOOPBACK: 'true',
        NODE_EXTRA_CA_CERTS: tls.certFile,
      }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), t?.close(), document?.close()]);
    assistant?.close();
    tls.remove();
  });

  it.each<[OAuthClientKind, 'DCR' | 'CIMD']>([
    ['v2', 'DCR'],
    ['v1', 'DCR'],
    ['v2', 'CIMD'],
    ['v1', 'CIMD'],
  ])(
    'the %s SDK (%s) signs in with the keyboard, reads a protected dataset and its full export, and loses access when the grant ends',
    async (kind, registration) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const refusals = recordPolicyRefusals(page);
      const responses = recordResponses(page);
      try {
        const provider = new MemoryOAuthProvider(
          registration === 'CIMD' ? document.url : undefined,
          callback,
        );
        const client = await signInWithSdk(kind, `${t.url}/mcp`, {
          password: ADMIN_PASSWORD,
          provider,
          browser: (url) => signInWithKeyboard(page, url, callback),
        });
        try {
          if (registration === 'CIMD') {
            expect(provider.clientInformation()).toMatchObject({ client_id: document.url });
            expect(document.fetched()).toBeGreaterThan(0);
          }
          const adminToken = await new Api(t.url).adminToken();
          await assistantJourney(client, { base: t.url, adminToken, username: 'admin' });
        } finally {
          await client.close();
        }
        expect(refusals).toEqual([]);
        expect(serverErrors(responses)).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});
