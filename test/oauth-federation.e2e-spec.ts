import { Api, P } from './support/api';
import { MemoryOAuthProvider, signInWithSdk } from './support/mcp-oauth';
import { CookieJar, browse, formAction } from './support/oauth-flow';
import { TestServer, startServer } from './support/server';
import { freePort } from './support/services';
import { OidcProvider, startOidcProvider } from './support/sso-gateway';

/**
 * What a person does in a browser when Drey's sign-in page sends them to the corporate identity provider:
 * Drey's page, its "organization" link, the provider's own sign-in form, back to Drey's consent page, then
 * back to the assistant.
 */
async function throughProvider(authorizationUrl: string, redirect: string): Promise<URL> {
  const jar = new CookieJar();
  let response = await browse(jar, authorizationUrl);
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  let url = authorizationUrl;
  for (let step = 0; step < 20; step++) {
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location') ?? '', url).href;
      if (url.startsWith(redirect)) return new URL(url);
      response = await browse(jar, url);
      continue;
    }
    const html = await response.text();
    if (response.status !== 200)
      throw new Error(`${response.status} at ${url}: ${html.slice(0, 400)}`);
    const federated = /id="federated" href="([^"]+)"/.exec(html)?.[1];
    if (federated) {
      // Drey's sign-in page: the person picks their organization's account.
      url = new URL(federated.replace(/&amp;/g, '&'), url).href;
      response = await browse(jar, url);
    } else if (html.includes('id="allow"')) {
      url = new URL(formAction(html), url).href;
      response = await browse(jar, url, form({ decision: 'allow' }));
    } else {
      // The provider's own sign-in form.
      url = new URL(formAction(html), url).href;
      response = await browse(jar, url, form({ username: 'carol', password: 'carol-secret' }));
    }
  }
  throw new Error('never sent back to the assistant');
}

describe('signing in through the corporate identity provider from Drey’s page (OAUTH_SERVER + OIDC)', () => {
  let idp: OidcProvider;
  let t: TestServer;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    // Drey on `localhost`, the provider on 127.0.0.1: two hosts, as a browser keeps their cookies apart.
    base = `http://localhost:${port}`;
    idp = await startOidcProvider({
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
    t = await startServer({
      PORT: String(port),
      PUBLIC_URL: base,
      OAUTH_SERVER: 'true',
      OAUTH_REGISTRATIONS_PER_HOUR: '1000',
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: 'drey-api',
      OIDC_CLIENT_ID: 'drey',
      OIDC_CLIENT_SECRET: 'drey-client-secret-for-tests',
    });
  });
  afterAll(async () => {
    await Promise.all([t?.close(), idp?.stop()]);
  });

  it('signs the person in at the provider, provisions them, and gives the assistant Drey’s own token', async () => {
    const provider = new MemoryOAuthProvider();
    const client = await signInWithSdk('v2', `${base}/mcp`, {
      password: '',
      provider,
      browser: (url) => throughProvider(url, provider.redirectUrl),
    });
    try {
      const result = await client.callTool('catalog', {});
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    // Drey's token, not the provider's: opaque, and refused at REST routes.
    expect(provider.accessToken).not.toContain('.');
    const api = new Api(t.url);
    const admin = await api.adminToken();
    const grants = await api.get(`${P}/grants?username=carol`, admin);
    expect(grants.body).toHaveLength(1);
    const audit = await api.get(`${P}/audit?action=oauth_sign_in&actor=carol`, admin);
    expect(audit.body.events[0]).toMatchObject({ details: { via: 'identity provider' } });
  });
});
