import { Api, P, decodeJwt, signJwt } from './support/api';
import { http } from './support/http';
import { JWT_SECRET, TestServer, startServer } from './support/server';
import {
  MCP_ACCEPT,
  MCP_INITIALIZE,
  McpTestClient,
  ToolResult,
  connectMcp,
  errorBody,
} from './support/mcp-clients';

/** The log line of a finished request, once the server has written it (it is written after the answer). */
async function requestLine(t: TestServer, id: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = t.server.linesOf(id).find((entry) => entry.msg === 'request');
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no log line for request ${id}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

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
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, 'x-api-key': named },
      });
      expect(bare.status).toBe(200);
      expect(bare.headers.get('applied-username')).toBe('mgr');
    });

    it('refuses a bad key with 401 invalid_token, and a key sent with a bearer token', async () => {
      const bad = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, 'x-api-key': 'x.y.z' },
      });
      expect(bad.status).toBe(401);
      expect(bad.body).toMatchObject({ statusCode: 401, error: 'invalid_token' });
      const both = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        token: named,
        headers: { ...MCP_ACCEPT, 'x-api-key': named },
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
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, 'x-api-key': key },
      });
      expect(ok.status).toBe(200);
      const revoked = await api.request('DELETE', `${P}/tokens/${decodeJwt(key).jti as string}`, {
        token: manager,
      });
      expect(revoked.status).toBeLessThan(300);
      const refused = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, 'x-api-key': key },
      });
      expect(refused.status).toBe(401);
    });

    it('carries Drey tokens only: an embedding token is refused and pointed to Authorization', async () => {
      const embed = await api.request('POST', `${P}/embed-tokens`, {
        token: admin,
        json: { dataset: 'expenses_by_month' },
      });
      expect(embed.status).toBe(201);
      const refused = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, 'x-api-key': embed.body.token as string },
      });
      expect(refused.status).toBe(401);
      expect(refused.body.message).toContain('Authorization: Bearer');
    });

    it('is ignored on every other route: no caller comes of it', async () => {
      const me = await api.get(`${P}/me`, undefined, { 'x-api-key': named });
      expect(me.status).toBe(401);
      expect(me.body.error).toBe('authentication_required');
      const bad = await api.get(`${P}/data-catalog`, undefined, { 'x-api-key': 'x.y.z' });
      expect(bad.status).toBe(200);
    });
  });

  describe('dataset_export: a short-lived link to the full export', () => {
    interface Link {
      dataset: string;
      format: string;
      url: string;
      expires_at: string;
      total_rows: number;
    }
    const link = (result: ToolResult) => {
      expect(result.isError).toBeFalsy();
      return result.structuredContent as unknown as Link;
    };
    const fetchRaw = (url: string) => fetch(url);

    it('answers an absolute link that a plain GET downloads as x_format over HTTP does', async () => {
      const client = await connect(manager);
      const answer = link(
        await client.callTool('dataset_export', {
          dataset: 'expenses_grouped',
          format: 'csv',
          selections: { group_by: 'cat' },
        }),
      );
      expect(
        answer.url.startsWith(`${t.url}${P}/datasets/expenses_grouped/export-link?token=`),
      ).toBe(true);
      const minutes = (Date.parse(answer.expires_at) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(4);
      expect(minutes).toBeLessThanOrEqual(5);
      const viaLink = await fetchRaw(answer.url);
      expect(viaLink.status).toBe(200);
      const viaHttp = await fetch(
        `${t.url}${P}/datasets/expenses_grouped/results?group_by=cat&x_format=csv`,
        { headers: { Authorization: `Bearer ${manager}` } },
      );
      expect(viaLink.headers.get('content-type')).toBe(viaHttp.headers.get('content-type'));
      expect(viaLink.headers.get('content-disposition')).toBe(
        viaHttp.headers.get('content-disposition'),
      );
      const text = await viaLink.text();
      expect(text).toBe(await viaHttp.text());
      expect(text.trim().split('\n').length - 1).toBe(answer.total_rows);
      // The link's token is a credential: the request log leaves it out, as it does x_embed_token.
      const token = new URL(answer.url).searchParams.get('token') as string;
      const id = viaLink.headers.get('x-request-id') as string;
      const line = await requestLine(t, id);
      expect(line.path).toBe(`${P}/datasets/expenses_grouped/export-link`);
      expect(JSON.stringify(t.server.logs)).not.toContain(token);
    });

    it('makes Parquet and Excel files, with the columns asked for', async () => {
      const client = await connect(admin);
      const parquet = link(
        await client.callTool('dataset_export', {
          dataset: 'expense_transactions',
          format: 'parquet',
          columns: ['category'],
        }),
      );
      expect(parquet.total_rows).toBe(1000);
      const file = Buffer.from(await (await fetchRaw(parquet.url)).arrayBuffer());
      expect(file.subarray(0, 4).toString()).toBe('PAR1');
      const xlsx = link(
        await client.callTool('dataset_export', {
          dataset: 'expense_transactions',
          format: 'xlsx',
        }),
      );
      const reply = await fetchRaw(xlsx.url);
      expect(reply.headers.get('content-disposition')).toContain('expense_transactions.xlsx');
      expect(
        Buffer.from(await reply.arrayBuffer())
          .subarray(0, 2)
          .toString(),
      ).toBe('PK');
    });

    it('passes a selection as a value, never as SQL', async () => {
      const answer = link(
        await (
          await connect(admin)
        ).callTool('dataset_export', {
          dataset: 'expense_transactions',
          selections: { description_filter: "x' OR '1'='1" },
        }),
      );
      expect(answer.total_rows).toBe(0);
      const text = await (await fetchRaw(answer.url)).text();
      expect(text.trim().split('\n')).toHaveLength(1);
    });

    it('refuses a bad format, dataset, selection or column as the HTTP export does', async () => {
      const client = await connect(manager);
      const format = await client.callTool('dataset_export', {
        dataset: 'expenses_grouped',
        format: 'json',
      });
      expect(errorBody(format)).toMatchObject({ statusCode: 400, error: 'invalid_request' });
      const unknown = await client.callTool('dataset_export', { dataset: 'nope' });
      expect(errorBody(unknown)).toMatchObject({ statusCode: 404 });
      const privateOne = await client.callTool('dataset_export', {
        dataset: 'expense_transactions',
      });
      expect(errorBody(privateOne)).toMatchObject({ statusCode: 403, error: 'forbidden' });
      const selection = await client.callTool('dataset_export', {
        dataset: 'expenses_grouped',
        selections: { group_by: 'no-such-option' },
      });
      expect(errorBody(selection).statusCode).toBe(400);
      const column = await client.callTool('dataset_export', {
        dataset: 'expenses_grouped',
        columns: ['no_such_column'],
      });
      expect(errorBody(column).statusCode).toBe(400);
    });

    it('refuses selections that would make a link too long to travel', async () => {
      const result = await (
        await connect(admin)
      ).callTool('dataset_export', {
        dataset: 'expense_transactions',
        selections: { description_filter: 'x'.repeat(9000) },
      });
      expect(errorBody(result)).toMatchObject({ statusCode: 400 });
      expect(errorBody(result).message).toContain('longer than 8000 characters');
    });

    it('refuses a link that is tampered with, for another dataset, expired, or of another kind', async () => {
      const answer = link(
        await (await connect(manager)).callTool('dataset_export', { dataset: 'expenses_grouped' }),
      );
      const token = new URL(answer.url).searchParams.get('token') as string;
      const tampered = await http(`${answer.url.slice(0, -2)}xx`);
      expect(tampered.status).toBe(401);
      expect(tampered.body).toMatchObject({ statusCode: 401, error: 'invalid_token' });
      const other = await http(
        `${t.url}${P}/datasets/expenses_by_month/export-link?token=${token}`,
      );
      expect(other.status).toBe(401);
      const claims = decodeJwt(token);
      const expired = signJwt({ ...claims, exp: Math.floor(Date.now() / 1000) - 5 }, JWT_SECRET);
      const late = await http(
        `${t.url}${P}/datasets/expenses_grouped/export-link?token=${expired}`,
      );
      expect(late.status).toBe(401);
      expect(late.body.message).toContain('expired');
      // A login token is signed with the same key, but is no link (its audience).
      const login = await http(
        `${t.url}${P}/datasets/expenses_grouped/export-link?token=${manager}`,
      );
      expect(login.status).toBe(401);
      const none = await http(`${t.url}${P}/datasets/expenses_grouped/export-link`);
      expect(none.status).toBe(401);
    });

    it('checks the user again at the fetch: a deleted user’s link is refused', async () => {
      const gone = await api.userToken(admin, 'gone', { role: 'manager' });
      const answer = link(
        await (await connect(gone)).callTool('dataset_export', { dataset: 'expenses_grouped' }),
      );
      expect((await fetchRaw(answer.url)).status).toBe(200);
      const deleted = await api.request('DELETE', `${P}/users/gone`, { token: admin });
      expect(deleted.status).toBeLessThan(300);
      const refused = await http(answer.url);
      expect(refused.status).toBe(401);
      expect(refused.body.message).toContain('no longer exists');
    });

    it('lasts no longer than the token it was made with: revoking the token ends its links', async () => {
      const issued = await api.request('POST', `${P}/tokens`, {
        token: manager,
        json: { title: 'assistant with links' },
      });
      const key = issued.body.access_token as string;
      const answer = link(
        await (
          await connect(undefined, { 'x-api-key': key })
        ).callTool('dataset_export', { dataset: 'expenses_grouped' }),
      );
      expect((await fetchRaw(answer.url)).status).toBe(200);
      await api.request('DELETE', `${P}/tokens/${decodeJwt(key).jti as string}`, {
        token: manager,
      });
      const refused = await http(answer.url);
      expect(refused.status).toBe(401);
      expect(refused.body.message).toContain('revoked');
    });

    it('applies the user’s scope as it is at the fetch: a selection they may no longer make is refused', async () => {
      const moved = await api.userToken(admin, 'moved', { role: 'manager' });
      // `trans` of group_by is for managers only (user_group_field: role).
      const answer = link(
        await (
          await connect(moved)
        ).callTool('dataset_export', {
          dataset: 'expenses_grouped',
          selections: { group_by: 'trans' },
        }),
      );
      const changed = await api.request('PUT', `${P}/users/moved`, {
        token: admin,
        json: { role: 'employee' },
      });
      expect(changed.status).toBe(200);
      const refused = await http(answer.url);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ statusCode: 400 });
    });

    it('serves an anonymous caller the public datasets, and audits issuing and fetching', async () => {
      const answer = link(
        await (await connect()).callTool('dataset_export', { dataset: 'expenses_by_month' }),
      );
      expect(answer.total_rows).toBe(12);
      expect((await fetchRaw(answer.url)).status).toBe(200);
      const fetched = await api.get(`${P}/audit?action=dataset_export_link`, admin);
      expect(fetched.body.events[0]).toMatchObject({
        target: 'expenses_by_month',
        outcome: 'success',
      });
      const issued = await api.get(`${P}/audit?action=mcp_tool_call`, admin);
      expect(
        (issued.body.events as { details: { tool: string } }[]).some(
          (event) => event.details.tool === 'dataset_export',
        ),
      ).toBe(true);
    });
  });

  describe('dashboard within what an assistant can take', () => {
    it('answers an HTML page only when asked, without Chart.js inlined: Drey serves it', async () => {
      const client = await connect(manager);
      const html = await client.callTool('dashboard', {
        dashboard: 'expenses_dashboard',
        format: 'html',
      });
      expect(html.isError).toBeFalsy();
      const text = html.content[0].text ?? '';
      expect(text).toMatch(/<html/i);
      const src = `${t.url}${P}/dashboard-assets/chart.umd.min.js`;
      expect(text).toContain(`<script src="${src}"></script>`);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(65536);
      expect(html.structuredContent).toMatchObject({
        format: 'html',
        bytes: Buffer.byteLength(text),
      });
      const script = await fetch(src);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
      expect((await script.text()).length).toBeGreaterThan(150_000);
      const again = await fetch(src, {
        headers: { 'If-None-Match': script.headers.get('etag') ?? '' },
      });
      expect(again.status).toBe(304);
    });

    it('refuses a format other than png or html as a tool error', async () => {
      const result = await (
        await connect(manager)
      ).callTool('dashboard', { dashboard: 'expenses_dashboard', format: 'pdf' });
      expect(errorBody(result)).toMatchObject({ statusCode: 400, error: 'invalid_request' });
    });
  });
});

describe('the dashboard tool past MCP_DASHBOARD_HTML_MAX_BYTES', () => {
  let t: TestServer;
  let api: Api;
  let client: McpTestClient;
  let manager: string;

  beforeAll(async () => {
    t = await startServer({ MCP_DASHBOARD_HTML_MAX_BYTES: '1024' });
    api = new Api(t.url);
    const admin = await api.adminToken();
    manager = await api.userToken(admin, 'mgr', { role: 'manager' });
    client = await connectMcp('v2-legacy', `${t.url}${P}/mcp`, manager);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('does not cut the page: it says how to get it, and a PNG is still answered', async () => {
    const result = await client.callTool('dashboard', {
      dashboard: 'expenses_report',
      format: 'html',
      selections: { start_date: '2024-06-01' },
    });
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as { over_cap: boolean; url: string; bytes: number };
    expect(answer.over_cap).toBe(true);
    expect(answer.bytes).toBeGreaterThan(1024);
    expect(result.content[0].text).toContain('MCP_DASHBOARD_HTML_MAX_BYTES');
    expect(result.content[0].text).not.toMatch(/<html/i);
    expect(answer.url).toBe(
      `${t.url}${P}/dashboards/expenses_report/results?start_date=2024-06-01`,
    );
    const page = await fetch(answer.url, { headers: { Authorization: `Bearer ${manager}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('2024-06');
    const png = await client.callTool('dashboard', { dashboard: 'expenses_report' });
    expect(png.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
  });
});
