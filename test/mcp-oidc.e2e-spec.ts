import { MONTHLY } from './support/figures';
import { Api, P } from './support/api';
import { TestIdp } from './support/idp';
import { TestServer, startServer } from './support/server';
import { CLIENT_KINDS, MCP_ACCEPT, MCP_INITIALIZE, connectMcp } from './support/mcp-clients';

const AUDIENCE = 'drey-api';
const now = () => Math.floor(Date.now() / 1000);

/**
 * With OIDC configured the MCP endpoint is a protected resource (MCP authorization, RFC 9728): its 401
 * names its Protected Resource Metadata, which names the identity provider, and the provider's tokens
 * are accepted as on every route.
 */
describe('the MCP server with an identity provider', () => {
  const idp = new TestIdp();
  let t: TestServer;
  let api: Api;
  let issuer: string;

  beforeAll(async () => {
    idp.addKey('rsa-1', 'RS256');
    issuer = await idp.start();
    t = await startServer({ OIDC_ISSUER: issuer, OIDC_AUDIENCE: AUDIENCE });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
    await idp.stop();
  });

  const token = () =>
    idp.token({
      iss: issuer,
      aud: AUDIENCE,
      exp: now() + 300,
      iat: now(),
      preferred_username: 'sso_alice',
      groups: [],
    });

  it.each([`${P}/mcp`, '/mcp'])(
    'answers an anonymous request to %s with 401 naming its Protected Resource Metadata',
    async (path) => {
      const reply = await api.request('POST', path, { json: MCP_INITIALIZE, headers: MCP_ACCEPT });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('authentication_required');
      const metadataUrl = `${t.url}/.well-known/oauth-protected-resource${path}`;
      expect(reply.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${metadataUrl}"`,
      );
      const metadata = await api.get(metadataUrl.slice(t.url.length));
      expect(metadata.status).toBe(200);
      expect(metadata.body).toEqual({
        resource: `${t.url}${path}`,
        authorization_servers: [issuer],
        resource_name: 'Drey: Expenses',
        bearer_methods_supported: ['header'],
      });
    },
  );

  it('names it on a refused token too, and leaves the other routes with a plain Bearer challenge', async () => {
    const refused = await api.request('POST', `${P}/mcp`, {
      json: MCP_INITIALIZE,
      headers: MCP_ACCEPT,
      token: 'not.a.token',
    });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_token');
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
    const me = await api.get(`${P}/me`);
    expect(me.status).toBe(401);
    expect(me.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each(CLIENT_KINDS)(
    "serves the %s client signed in with the provider's token",
    async (kind) => {
      const client = await connectMcp(kind, `${t.url}${P}/mcp`, token());
      try {
        const { tools } = await client.listTools();
        const rows = tools.find((tool) => tool.name === 'dataset_rows');
        expect(rows?.inputSchema.properties?.dataset.enum).toEqual([
          'expenses_by_month',
          'expenses_grouped',
        ]);
        const result = await client.callTool('dataset_rows', {
          dataset: 'expenses_by_month',
          limit: 12,
        });
        expect((result.structuredContent as { rows: unknown }).rows).toEqual(MONTHLY);
      } finally {
        await client.close();
      }
    },
  );
});
