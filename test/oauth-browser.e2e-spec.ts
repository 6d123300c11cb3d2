import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import {
  launchBrowser,
  recordPolicyRefusals,
  recordResponses,
  serverErrors,
} from './support/browser';
import { MemoryOAuthProvider, OAuthClientKind, signInWithSdk } from './support/mcp-oauth';
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
  const assistant = createServer((_request, response) => response.end('back at the assistant'));
  let callback: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => assistant.listen(0, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${(assistant.address() as AddressInfo).port}/callback`;
    [t, browser] = await Promise.all([
      startServer({ OAUTH_SERVER: 'true', OAUTH_REGISTRATIONS_PER_HOUR: '1000' }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), t?.close()]);
    assistant.close();
  });

  it.each<OAuthClientKind>(['v2', 'v1'])(
    'the %s SDK’s sign-in completes with the keyboard, with no policy refusal and no 5xx',
    async (kind) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const refusals = recordPolicyRefusals(page);
      const responses = recordResponses(page);
      try {
        const client = await signInWithSdk(kind, `${t.url}/mcp`, {
          password: ADMIN_PASSWORD,
          provider: new MemoryOAuthProvider(undefined, callback),
          browser: (url) => signInWithKeyboard(page, url, callback),
        });
        try {
          const result = await client.callTool('dataset_rows', {
            dataset: 'expense_transactions',
            limit: 1,
          });
          expect(result.isError).toBeFalsy();
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
