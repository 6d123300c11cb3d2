import type { Browser, Page } from 'playwright-core';
import { Api, P } from './support/api';
import {
  launchBrowser,
  recordPolicyRefusals,
  recordResponses,
  serverErrors,
} from './support/browser';
import {
  AssistantCallback,
  MemoryOAuthProvider,
  OAuthClientKind,
  assistantJourney,
  listenAsAssistant,
  signInWithSdk,
} from './support/mcp-oauth';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';
import { freePort } from './support/services';
import { OidcProvider, startOidcProvider } from './support/sso-gateway';

/**
 * What a person does in Chromium when Drey's sign-in page sends them to the corporate identity provider:
 * Drey's page, its "organization" link, the provider's own sign-in form (typed, sent with Enter), back to
 * Drey's consent page ("Allow" has the focus), then back to the assistant's loopback `callback`.
 */
async function throughProvider(page: Page, authorizationUrl: string, callback: string) {
  await page.goto(authorizationUrl);
  await page.click('#federated');
  await page.waitForSelector('#username');
  await page.keyboard.type('carol');
  await page.keyboard.press('Tab');
  await page.keyboard.type('carol-secret');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#allow');
  expect(await page.textContent('#client')).toContain('Drey test assistant');
  await page.keyboard.press('Enter');
  await page.waitForURL(`${callback}**`);
  return new URL(page.url());
}

describe('signing in through the corporate identity provider from Drey’s page (OAUTH_SERVER + OIDC), in Chromium', () => {
  let idp: OidcProvider | undefined;
  let idpPort: number;
  let t: TestServer;
  let base: string;
  let browser: Browser;
  // The assistant's own loopback page, which the browser is sent back to.
  let assistant: AssistantCallback | undefined;
  let callback: string;

  beforeAll(async () => {
    const port = await freePort();
    idpPort = await freePort();
    // Drey on `localhost`, the provider on 127.0.0.1: two hosts, as a browser keeps their cookies apart.
    // The provider is not started yet: the first test finds it unreachable.
    base = `http://localhost:${port}`;
    assistant = await listenAsAssistant();
    callback = assistant.callback;
    [t, browser] = await Promise.all([
      startServer({
        PORT: String(port),
        PUBLIC_URL: base,
        OAUTH_SERVER: 'true',
        OAUTH_REGISTRATIONS_PER_HOUR: '1000',
        OIDC_ISSUER: `http://127.0.0.1:${idpPort}`,
        OIDC_AUDIENCE: 'drey-api',
        OIDC_CLIENT_ID: 'drey',
        OIDC_CLIENT_SECRET: 'drey-client-secret-for-tests',
      }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), idp?.stop(), browser?.close()]);
    assistant?.close();
  });

  it('says when the provider cannot be reached (503, Retry-After), and a Drey account still signs in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const provider = new MemoryOAuthProvider(undefined, callback);
      const client = await signInWithSdk('v2', `${base}/mcp`, {
        password: ADMIN_PASSWORD,
        provider,
        browser: async (url) => {
          await page.goto(url);
          const [unreachable] = await Promise.all([
            page.waitForResponse((response) => response.url().includes('/federated')),
            page.click('#federated'),
          ]);
          expect(unreachable.status()).toBe(503);
          expect(unreachable.headers()['retry-after']).toBe('30');
          expect(await page.textContent('body')).toContain('cannot be reached');
          // Back to Drey's page: the person signs in with their Drey account instead.
          await page.goBack();
          await page.fill('#username', 'admin');
          await page.fill('#password', ADMIN_PASSWORD);
          await page.keyboard.press('Enter');
          await page.waitForSelector('#allow');
          await page.keyboard.press('Enter');
          await page.waitForURL(`${callback}**`);
          return new URL(page.url());
        },
      });
      try {
        expect((await client.callTool('catalog', {})).isError).toBeFalsy();
      } finally {
        await client.close();
      }
      expect(t.server.logs.some((line) => line.msg === 'identity provider unreachable')).toBe(true);
    } finally {
      await context.close();
    }
  });

  it.each<OAuthClientKind>(['v2', 'v1'])(
    'the %s SDK: the person signs in at the provider, is provisioned, and the assistant gets Drey’s own token until the grant ends',
    async (kind) => {
      idp ??= await startOidcProvider({
        port: idpPort,
        users: { carol: { password: 'carol-secret', groups: ['finance'] } },
        clients: [
          {
            client_id: 'drey',
            client_secret: 'drey-client-secret-for-tests',
            redirect_uris: [`${base}/oauth/sign-in/callback`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        resource: { indicator: 'https://api.example/', audience: 'drey-api' },
      });
      const context = await browser.newContext();
      const page = await context.newPage();
      const refusals = recordPolicyRefusals(page);
      const responses = recordResponses(page);
      try {
        const provider = new MemoryOAuthProvider(undefined, callback);
        const client = await signInWithSdk(kind, `${base}/mcp`, {
          password: '',
          provider,
          browser: (url) => throughProvider(page, url, callback),
        });
        try {
          // Drey's token, not the provider's: opaque, and refused at REST routes.
          expect(provider.accessToken).not.toContain('.');
          const api = new Api(t.url);
          const admin = await api.adminToken();
          expect((await api.get(`${P}/me`, provider.accessToken as string)).status).toBe(401);
          const audit = await api.get(`${P}/audit?action=oauth_sign_in&actor=carol`, admin);
          expect(audit.body.events[0]).toMatchObject({ details: { via: 'identity provider' } });
          await assistantJourney(client, { base: t.url, adminToken: admin, username: 'carol' });
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
