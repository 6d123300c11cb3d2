import { Api, P, decodeJwt } from './support/api';
import { TestServer, startServer } from './support/server';
import { McpTestClient, connectMcp } from './support/mcp-clients';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'curl', version: '1' },
  },
};
const MCP_HEADERS = { Accept: 'application/json, text/event-stream' };

describe('the MCP tools for headless clients and assistants (issue 39)', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let manager: string;
  let named: string;
  const open: McpTestClient[] = [];
  const connect = async (token?: string, headers: Record<string, string> = {}) => {
    const client = await connectMcp('v2-modern', `${t.url}${P}/mcp`, token, headers);
    open.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    manager = await api.userToken(admin, 'mgr', { role: 'manager' });
    const issued = await api.request('POST', `${P}/tokens`, {
      token: manager,
      json: { title: 'headless assistant' },
    });
    expect(issued.status).toBe(200);
    named = issued.body.access_token as string;
  });
  afterAll(async () => {
    await Promise.all(open.map((client) => client.close()));
    await t.close();
  });

  describe('x-api-key on the MCP endpoint', () => {
    it('takes a named token as the caller, at P/mcp and /mcp', async () => {
      const client = await connect(undefined, { 'x-api-key': named });
      const { tools } = await client.listTools();
      const rows = tools.find((tool) => tool.name === 'dataset_rows');
      // The manager's scope: a dataset an anonymous caller is not listed.
      expect(rows?.inputSchema.properties?.dataset.enum).toContain('expenses_grouped');
      const bare = await api.request('POST', '/mcp', {
        json: initialize,
        headers: { ...MCP_HEADERS, 'x-api-key': named },
      });
      expect(bare.status).toBe(200);
      expect(bare.headers.get('applied-username')).toBe('mgr');
    });

    it('refuses a bad key with 401 invalid_token, and a key sent with a bearer token', async () => {
      const bad = await api.request('POST', `${P}/mcp`, {
        json: initialize,
        headers: { ...MCP_HEADERS, 'x-api-key': 'x.y.z' },
      });
      expect(bad.status).toBe(401);
      expect(bad.body).toMatchObject({ statusCode: 401, error: 'invalid_token' });
      const both = await api.request('POST', `${P}/mcp`, {
        json: initialize,
        token: named,
        headers: { ...MCP_HEADERS, 'x-api-key': named },
      });
      expect(both.status).toBe(401);
      expect(both.body.message).toContain('not both');
    });

    it('is refused once the token is revoked', async () => {
      const issued = await api.request('POST', `${P}/tokens`, {
        token: manager,
        json: { title: 'revoked soon' },
      });
      const key = issued.body.access_token as string;
      const ok = await api.request('POST', `${P}/mcp`, {
        json: initialize,
        headers: { ...MCP_HEADERS, 'x-api-key': key },
      });
      expect(ok.status).toBe(200);
      const revoked = await api.request('DELETE', `${P}/tokens/${decodeJwt(key).jti as string}`, {
        token: manager,
      });
      expect(revoked.status).toBeLessThan(300);
      const refused = await api.request('POST', `${P}/mcp`, {
        json: initialize,
        headers: { ...MCP_HEADERS, 'x-api-key': key },
      });
      expect(refused.status).toBe(401);
    });

    it('is ignored on every other route: no caller comes of it', async () => {
      const me = await api.get(`${P}/me`, undefined, { 'x-api-key': named });
      expect(me.status).toBe(401);
      expect(me.body.error).toBe('authentication_required');
      const bad = await api.get(`${P}/data-catalog`, undefined, { 'x-api-key': 'x.y.z' });
      expect(bad.status).toBe(200);
    });
  });
});
