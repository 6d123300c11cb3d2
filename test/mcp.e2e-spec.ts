import { MONTHLY } from './support/figures';
import { Api, P } from './support/api';
import { TestServer, startServer } from './support/server';
import {
  CLIENT_KINDS,
  MCP_ACCEPT,
  MCP_INITIALIZE,
  McpTestClient,
  ToolInfo,
  connectMcp,
  errorBody,
} from './support/mcp-clients';

const PNG_SIGNATURE = '89504e470d0a1a0a';

/** The sum of a column of amounts, in cents, so that the figure is exact. */
function cents(values: unknown[]): number {
  return values.reduce<number>((sum, value) => sum + Math.round(Number(value) * 100), 0);
}

describe('the MCP server', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let manager: string;
  let employee: string;

  beforeAll(async () => {
    t = await startServer({ MCP_MAX_ROWS: '100' });
    api = new Api(t.url);
    admin = await api.adminToken();
    manager = await api.userToken(admin, 'mgr', { role: 'manager' });
    employee = await api.userToken(admin, 'emp', { role: 'employee' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('has no authorization server when OAUTH_SERVER is off (the default): its addresses are not found', async () => {
    expect((await api.get('/.well-known/oauth-authorization-server')).status).toBe(404);
    expect((await api.get('/oauth/authorize')).status).toBe(404);
    expect((await api.get('/oauth/sign-in/x')).status).toBe(404);
  });

  describe.each(CLIENT_KINDS)('with the %s client', (kind) => {
    const open: McpTestClient[] = [];
    const connect = async (token?: string, path = `${P}/mcp`) => {
      const client = await connectMcp(kind, `${t.url}${path}`, token);
      open.push(client);
      return client;
    };
    afterAll(async () => {
      await Promise.all(open.map((client) => client.close()));
    });

    it('speaks the revision its SDK negotiates', async () => {
      const client = await connect();
      expect(client.protocol).toBe(kind === 'v2-modern' ? '2026-07-28' : '2025-11-25');
    });

    it("lists the tools an anonymous caller may use, with the project's public items as enums", async () => {
      const { tools } = await (await connect()).listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'catalog',
        'dataset_parameters',
        'dataset_rows',
        'dataset_export',
        'dashboard',
      ]);
      const rows = tools.find((tool) => tool.name === 'dataset_rows') as ToolInfo;
      expect(rows.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
      expect(rows.outputSchema).toMatchObject({ type: 'object' });
      const properties = rows.inputSchema.properties ?? {};
      expect(properties.dataset.enum).toEqual(['expenses_by_month']);
      expect(properties.dataset.description).toContain('Total spent per month');
      expect(properties.limit).toMatchObject({ maximum: 100, default: 10 });
      const selections = properties.selections.properties as Record<
        string,
        Record<string, unknown>
      >;
      expect(Object.keys(selections)).toEqual([
        'start_date',
        'end_date',
        'min_filter',
        'max_filter',
      ]);
      expect(selections.min_filter).toMatchObject({ type: 'number', minimum: 0, maximum: 300 });
      const dashboard = tools.find((tool) => tool.name === 'dashboard') as ToolInfo;
      expect(dashboard.inputSchema.properties?.dashboard.enum).toEqual(['expenses_report']);
    });

    it("gives a signed-in caller's tools the items of their scope, and administrators query_models", async () => {
      const employeeTools = (await (await connect(employee)).listTools()).tools;
      const rows = employeeTools.find((tool) => tool.name === 'dataset_rows') as ToolInfo;
      expect(rows.inputSchema.properties?.dataset.enum).toEqual([
        'expenses_by_month',
        'expenses_grouped',
      ]);
      // The option of group_by only managers see (user_group_field: role).
      const groupBy = (
        rows.inputSchema.properties?.selections.properties as Record<string, { enum: string[] }>
      ).group_by;
      expect(groupBy.enum).not.toContain('trans');
      expect(employeeTools.map((tool) => tool.name)).not.toContain('query_models');
      const adminTools = (await (await connect(admin)).listTools()).tools;
      expect(adminTools.map((tool) => tool.name)).toContain('query_models');
    });

    it('reads the monthly totals of the example, to the cent', async () => {
      const client = await connect();
      const result = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 12,
      });
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as {
        rows: [string, number][];
        total_rows: number;
      };
      expect(structured.rows).toEqual(MONTHLY);
      expect(structured).toMatchObject({ total_rows: 12, left_out: 0, next_offset: null });
      // The text copy writes a decimal at its scale, as the CSV export does; the structured rows keep numbers.
      expect(result.content[0].text).toContain('2024-03 | 3248.50\n');
    });

    it('answers 10 rows by default and says how many were left out and how to page', async () => {
      const result = await (
        await connect()
      ).callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        columns: ['month'],
      });
      expect(result.structuredContent).toMatchObject({
        columns: [{ name: 'month', type: 'string' }],
        total_rows: 12,
        offset: 0,
        left_out: 2,
        next_offset: 10,
      });
      expect((result.structuredContent?.rows as unknown[]).length).toBe(10);
      expect(result.content[0].text).toContain(
        '2 left out. Next page: call dataset_rows again with offset=10',
      );
    });

    it('pages through every transaction for an administrator', async () => {
      const client = await connect(admin);
      const ids = new Set<unknown>();
      const amounts: unknown[] = [];
      let offset: number | null = 0;
      let pages = 0;
      while (offset !== null) {
        const result = await client.callTool('dataset_rows', {
          dataset: 'expense_transactions',
          columns: ['id', 'amount'],
          limit: 100,
          offset,
        });
        expect(result.isError).toBeFalsy();
        const page = result.structuredContent as {
          rows: [unknown, unknown][];
          next_offset: number | null;
          total_rows: number;
        };
        expect(page.total_rows).toBe(1000);
        for (const [id, amount] of page.rows) {
          ids.add(id);
          amounts.push(amount);
        }
        offset = page.next_offset;
        pages++;
      }
      expect(pages).toBe(10);
      expect(ids.size).toBe(1000);
      expect(cents(amounts)).toBe(3022616);
    });

    it('refuses private items anonymously and across scopes with the HTTP endpoint’s code and message', async () => {
      const anonymous = await connect();
      for (const [token, client] of [
        [undefined, anonymous],
        [employee, await connect(employee)],
        [manager, await connect(manager)],
      ] as const) {
        const http = await api.get(`${P}/datasets/expense_transactions/results`, token);
        const refused = await client.callTool('dataset_rows', { dataset: 'expense_transactions' });
        expect(refused.structuredContent).toBeUndefined();
        expect(errorBody(refused)).toEqual(http.body);
        expect([401, 403]).toContain(http.status);
      }
      const dashboard = await anonymous.callTool('dashboard', { dashboard: 'expenses_dashboard' });
      expect(errorBody(dashboard)).toMatchObject({
        statusCode: 401,
        error: 'authentication_required',
      });
      const parameters = await anonymous.callTool('dataset_parameters', {
        dataset: 'expenses_grouped',
      });
      expect(errorBody(parameters)).toMatchObject({ error: 'authentication_required' });
      const unknown = await anonymous.callTool('dataset_rows', { dataset: 'nope' });
      expect(errorBody(unknown)).toMatchObject({ statusCode: 404, error: 'not_found' });
    });

    it('refuses a bad selection, a limit past the cap and an unknown column as HTTP does', async () => {
      const client = await connect();
      const http = await api.get(`${P}/datasets/expenses_by_month/results?min_filter=5000`);
      const bad = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        selections: { min_filter: 5000 },
      });
      expect(errorBody(bad)).toEqual(http.body);
      expect(http.body.error).toBe('invalid_parameter_selection');
      const tooMany = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 101,
      });
      expect(errorBody(tooMany)).toMatchObject({ statusCode: 400, error: 'invalid_request' });
      const column = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        columns: ['nope'],
      });
      expect(errorBody(column)).toMatchObject({ error: 'invalid_request' });
      const builtin = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        selections: { x_limit: 100000 },
      });
      expect(errorBody(builtin)).toMatchObject({ error: 'invalid_request' });
    });

    it('applies selections and cascading through the same services', async () => {
      const client = await connect(manager);
      const filtered = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        selections: { start_date: '2024-11-01' },
      });
      expect((filtered.structuredContent as { rows: unknown[] }).rows).toEqual(MONTHLY.slice(0, 2));
      const all = await client.callTool('dataset_parameters', { dataset: 'expenses_grouped' });
      const only = await client.callTool('dataset_parameters', {
        dataset: 'expenses_grouped',
        selections: { category: ['0'] },
      });
      const subcategories = (result: typeof all) =>
        (
          (
            result.structuredContent as { parameters: { name: string; options?: unknown[] }[] }
          ).parameters.find((parameter) => parameter.name === 'subcategory')?.options ?? []
        ).length;
      expect(subcategories(all)).toBe(14);
      expect(subcategories(only)).toBeGreaterThan(0);
      expect(subcategories(only)).toBeLessThan(14);
      const http = await api.request('POST', `${P}/datasets/expenses_grouped/parameters`, {
        token: manager,
        json: { category: ['0'] },
      });
      expect((only.structuredContent as { parameters: unknown }).parameters).toEqual(
        http.body.parameters,
      );
    });

    it('reads the catalog as a tool and as a resource', async () => {
      const client = await connect(manager);
      const catalog = await client.callTool('catalog');
      const structured = catalog.structuredContent as {
        datasets: { name: string; columns: { name: string }[] }[];
        dashboards: { name: string }[];
      };
      expect(structured.datasets.map((dataset) => dataset.name)).toEqual([
        'expenses_by_month',
        'expenses_grouped',
      ]);
      expect(structured.datasets[0].columns.map((column) => column.name)).toEqual([
        'month',
        'total_amount',
      ]);
      expect(structured.dashboards.map((dashboard) => dashboard.name)).toEqual([
        'expenses_dashboard',
        'expenses_report',
      ]);
      expect(catalog.content[0].text).toContain('expenses_by_month (Expenses by Month)');
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toEqual(['drey://expenses/catalog']);
      const read = await client.readResource('drey://expenses/catalog');
      expect(JSON.parse(read.contents[0].text ?? '')).toEqual(structured);
    });

    it('renders both dashboards as PNG images, and the HTML one as text when asked', async () => {
      const client = await connect(manager);
      for (const dashboard of ['expenses_dashboard', 'expenses_report']) {
        const png = await client.callTool('dashboard', { dashboard });
        expect(png.isError).toBeFalsy();
        expect(png.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
        const bytes = Buffer.from(png.content[0].data ?? '', 'base64');
        expect(bytes.subarray(0, 8).toString('hex')).toBe(PNG_SIGNATURE);
        expect(png.structuredContent).toMatchObject({ format: 'png', bytes: bytes.length });
      }
      const html = await client.callTool('dashboard', {
        dashboard: 'expenses_report',
        format: 'html',
        selections: { start_date: '2024-06-01' },
      });
      expect(html.content[0].type).toBe('text');
      expect(html.content[0].text).toMatch(/<html/i);
      expect(html.content[0].text).toContain('2024-06');
      expect(html.content[0].text).not.toContain('2024-05');
    });

    it('runs SQL over the models for administrators only', async () => {
      const result = await (
        await connect(admin)
      ).callTool('query_models', {
        sql: 'SELECT count(*) AS n, sum(amount) AS total FROM expenses',
      });
      expect(result.isError).toBeFalsy();
      const rows = (result.structuredContent as { rows: unknown[][] }).rows;
      expect(Number(rows[0][0])).toBe(1000);
      expect(Math.round(Number(rows[0][1]) * 100)).toBe(3022616);
      const writes = await (
        await connect(admin)
      ).callTool('query_models', {
        sql: 'CREATE TABLE t AS SELECT 1',
      });
      expect(errorBody(writes)).toMatchObject({ error: 'invalid_sql' });
    });

    it('serves /mcp as P/mcp', async () => {
      const client = await connect(undefined, '/mcp');
      const result = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 1,
      });
      expect((result.structuredContent as { rows: unknown[] }).rows).toEqual([MONTHLY[0]]);
    });
  });

  describe('over HTTP', () => {
    it("refuses an Origin that is neither the service's own nor a CORS origin with 403", async () => {
      const refused = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, Origin: 'http://evil.example' },
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ statusCode: 403, error: 'forbidden' });
      const own = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: { ...MCP_ACCEPT, Origin: t.url },
      });
      expect(own.status).toBe(200);
    });

    it('refuses a bad token with 401 as every route does, and another project with 404', async () => {
      const bad = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: MCP_ACCEPT,
        token: 'x.y.z',
      });
      expect(bad.status).toBe(401);
      expect(bad.body.error).toBe('invalid_token');
      const other = await api.request('POST', '/api/service-v0/project/other/v1/mcp', {
        json: MCP_INITIALIZE,
        headers: MCP_ACCEPT,
      });
      expect(other.status).toBe(404);
    });

    it('bounds the body as every route does', async () => {
      const huge = {
        ...MCP_INITIALIZE,
        params: {
          ...MCP_INITIALIZE.params,
          clientInfo: { name: 'x'.repeat(2_000_000), version: '1' },
        },
      };
      const reply = await api.request('POST', `${P}/mcp`, { json: huge, headers: MCP_ACCEPT });
      expect(reply.status).toBe(413);
      expect(reply.body.error).toBe('payload_too_large');
      const deep = await fetch(`${t.url}${P}/mcp`, {
        method: 'POST',
        headers: { ...MCP_ACCEPT, 'Content-Type': 'application/json' },
        body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`,
      });
      expect(deep.status).toBe(400);
    });

    it('has no Protected Resource Metadata without an identity provider', async () => {
      const reply = await api.get(`/.well-known/oauth-protected-resource${P}/mcp`);
      expect(reply.status).toBe(404);
      const anonymous = await api.request('POST', `${P}/mcp`, {
        json: MCP_INITIALIZE,
        headers: MCP_ACCEPT,
      });
      expect(anonymous.status).toBe(200);
    });

    it('answers a GET (a 2025 stream) with 405: the server keeps no session', async () => {
      const reply = await api.get(`${P}/mcp`, undefined, { Accept: 'text/event-stream' });
      expect(reply.status).toBe(405);
    });

    it('answers a 2025-era request in one JSON body, and over SSE when it asks for progress', async () => {
      const call = (meta?: object) =>
        fetch(`${t.url}${P}/mcp`, {
          method: 'POST',
          headers: { ...MCP_ACCEPT, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 3,
            method: 'tools/call',
            params: {
              name: 'catalog',
              arguments: {},
              ...(meta && { _meta: meta }),
            },
          }),
        });
      const json = await call();
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await json.json()) as { id: number; result: { isError?: boolean } };
      expect(answer.id).toBe(3);
      expect(answer.result.isError).toBeFalsy();
      const streamed = await call({ progressToken: 'p1' });
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await streamed.text()).toContain('"id":3');
    });

    it('answers 2025-era calls of several callers at once, each as its own caller, audited under its name', async () => {
      // Plain calls are served by servers kept per caller view (McpService.answer): a kept server must
      // never answer one caller with another's rights, nor audit one caller's call under another name.
      const callers = [
        { token: admin, actor: 'admin', allowed: true },
        { token: manager, actor: 'mgr', allowed: false },
        { token: employee, actor: 'emp', allowed: false },
        { token: undefined, actor: null, allowed: false },
      ];
      const before = await api.get(`${P}/audit?action=mcp_tool_call&limit=1000`, admin);
      const calls = Array.from({ length: 24 }, (_, index) => callers[index % callers.length]);
      const answers = await Promise.all(
        calls.map(async ({ token }, index) => {
          const reply = await fetch(`${t.url}${P}/mcp`, {
            method: 'POST',
            headers: {
              ...MCP_ACCEPT,
              'Content-Type': 'application/json',
              ...(token && { Authorization: `Bearer ${token}` }),
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: {
                name: 'dataset_rows',
                arguments: { dataset: 'expense_transactions', limit: 1, offset: index },
              },
            }),
          });
          expect(reply.status).toBe(200);
          expect(reply.headers.get('content-type')).toBe('application/json');
          return (await reply.json()) as {
            id: number;
            result: { isError?: boolean; structuredContent?: { offset: number } };
          };
        }),
      );
      answers.forEach((answer, index) => {
        expect(answer.id).toBe(1);
        if (calls[index].allowed) {
          expect(answer.result.isError).toBeFalsy();
          expect(answer.result.structuredContent?.offset).toBe(index);
        } else {
          expect(answer.result.isError).toBe(true);
        }
      });
      const after = await api.get(`${P}/audit?action=mcp_tool_call&limit=1000`, admin);
      const added = (after.body.events as { actor: string | null; outcome: string }[]).slice(
        0,
        after.body.events.length - before.body.events.length,
      );
      for (const { actor, allowed } of callers) {
        const theirs = added.filter((event) => event.actor === actor);
        expect(theirs).toHaveLength(calls.length / callers.length);
        expect(theirs.every((event) => event.outcome === (allowed ? 'success' : 'failure'))).toBe(
          true,
        );
      }
    });

    it("leaves what the SDK's transport refuses to the transport: media types, protocol version, JSON-RPC shape", async () => {
      const call = (extra: Record<string, string>, body: unknown = {}) =>
        fetch(`${t.url}${P}/mcp`, {
          method: 'POST',
          headers: { ...MCP_ACCEPT, 'Content-Type': 'application/json', ...extra },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 5,
            method: 'tools/call',
            params: { name: 'catalog', arguments: {} },
            ...(body as object),
          }),
        });
      expect((await call({ Accept: 'application/json' })).status).toBe(406);
      expect((await call({ 'Content-Type': 'text/plain' })).status).toBe(415);
      const version = await call({ 'MCP-Protocol-Version': '1999-01-01' });
      expect(version.status).toBe(400);
      expect(await version.text()).toContain('Unsupported protocol version');
      expect((await call({}, { jsonrpc: '1.0' })).status).toBe(400);
      expect((await call({ 'MCP-Protocol-Version': '2025-06-18' })).status).toBe(200);
    });

    it('audits every call with the caller, tool, item and selections, and counts it in /metrics', async () => {
      const client = await connectMcp('v2-modern', `${t.url}${P}/mcp`, manager);
      await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        selections: { start_date: '2024-02-01' },
      });
      await client.callTool('dataset_rows', { dataset: 'expense_transactions' });
      await client.close();
      const page = await api.get(`${P}/audit?action=mcp_tool_call&actor=mgr`, admin);
      expect(page.status).toBe(200);
      expect(page.body.events[0]).toMatchObject({
        actor: 'mgr',
        target: 'expense_transactions',
        outcome: 'failure',
        details: { tool: 'dataset_rows', error: 'forbidden' },
      });
      expect(page.body.events[1]).toMatchObject({
        actor: 'mgr',
        target: 'expenses_by_month',
        outcome: 'success',
        details: { tool: 'dataset_rows', selections: { start_date: '2024-02-01' } },
      });
      expect(page.body.events[1].request_id).toEqual(expect.any(String));
      const metrics = await api.get('/metrics', admin);
      expect(metrics.text).toMatch(
        /drey_mcp_tool_calls_total\{tool="dataset_rows",outcome="success"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /drey_mcp_tool_calls_total\{tool="dataset_rows",outcome="forbidden"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /drey_http_requests_total\{method="POST",route="\/api\/service-v0\/project\/:project\/:version\/mcp",status="200"\}/,
      );
    });
  });
});

describe('the MCP server for an assistant in a browser (CORS_ORIGINS)', () => {
  let t: TestServer;
  let api: Api;
  const APP = 'https://app.example';

  beforeAll(async () => {
    t = await startServer({ CORS_ORIGINS: APP });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets a configured origin send the transport’s headers and read its answers; another is refused', async () => {
    const preflight = await api.request('OPTIONS', `${P}/mcp`, {
      headers: {
        Origin: APP,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Mcp-Protocol-Version');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Api-Key');
    const allowed = await api.request('POST', `${P}/mcp`, {
      json: MCP_INITIALIZE,
      headers: { ...MCP_ACCEPT, Origin: APP },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP);
    const other = await api.request('POST', `${P}/mcp`, {
      json: MCP_INITIALIZE,
      headers: { ...MCP_ACCEPT, Origin: 'https://evil.example' },
    });
    expect(other.status).toBe(403);
  });
});
