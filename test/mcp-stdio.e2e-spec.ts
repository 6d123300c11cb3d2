import { MONTHLY } from './support/figures';
import { Api, P, decodeJwt } from './support/api';
import { CLI, drey } from './support/drey-cli';
import { REPO_ROOT, TestServer, startServer } from './support/server';
import { CLIENT_KINDS, McpTestClient, connectStdio, errorBody } from './support/mcp-clients';

const PNG_SIGNATURE = '89504e470d0a1a0a';

/**
 * `drey mcp`: the MCP server over stdio, started as a desktop assistant starts it, beside a running
 * service (one more process on its database, Redis and data folder), signed in with a named token.
 */
describe('drey mcp', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let named: { admin: string; employee: string };

  const env = (token: string | undefined) => {
    const { PORT: _port, ...rest } = t.env;
    return token === undefined ? rest : { ...rest, DREY_TOKEN: token };
  };

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    const employee = await api.userToken(admin, 'emp', { role: 'employee' });
    named = {
      admin: await api.namedToken(admin, 'desktop assistant'),
      employee: await api.namedToken(employee, 'desktop assistant'),
    };
  });
  afterAll(async () => {
    await t.close();
  });

  describe.each(CLIENT_KINDS)('driven by the %s client', (kind) => {
    let client: McpTestClient & { stderr: string[] };
    beforeAll(async () => {
      client = await connectStdio(
        kind,
        process.execPath,
        [CLI, 'mcp'],
        env(named.admin),
        REPO_ROOT,
      );
    });
    afterAll(async () => {
      await client.close();
    });

    it('speaks the revision its client asks for, and logs to stderr only', async () => {
      // A pinned client sends nothing at connect: the first answer comes once the process has started.
      await client.listTools();
      expect(client.protocol).toBe(kind === 'v2-modern' ? '2026-07-28' : '2025-11-25');
      expect(client.stderr.join('')).toContain('drey mcp: serving admin over stdio');
    });

    it("lists the administrator's tools and reads the monthly totals", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'catalog',
        'dataset_parameters',
        'dataset_rows',
        'dashboard',
        'query_models',
      ]);
      const result = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 12,
      });
      expect((result.structuredContent as { rows: unknown }).rows).toEqual(MONTHLY);
    });

    it('pages through the transactions and renders both dashboards as PNG', async () => {
      const last = await client.callTool('dataset_rows', {
        dataset: 'expense_transactions',
        columns: ['id'],
        limit: 100,
        offset: 900,
      });
      expect(last.structuredContent).toMatchObject({
        total_rows: 1000,
        offset: 900,
        left_out: 900,
        next_offset: null,
      });
      expect((last.structuredContent as { rows: unknown[] }).rows).toHaveLength(100);
      const png = await client.callTool('dashboard', { dashboard: 'expenses_dashboard' });
      expect(
        Buffer.from(png.content[0].data ?? '', 'base64')
          .subarray(0, 8)
          .toString('hex'),
      ).toBe(PNG_SIGNATURE);
      // The HTML dashboard as a PNG too; its page as text needs the HTTP service (Chart.js is loaded from it).
      const report = await client.callTool('dashboard', { dashboard: 'expenses_report' });
      expect(report.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
      const html = await client.callTool('dashboard', {
        dashboard: 'expenses_report',
        format: 'html',
      });
      expect(html.isError).toBe(true);
      expect(html.content[0].text).toContain('PNG only');
      const catalog = await client.callTool('catalog');
      expect(catalog.isError).toBeFalsy();
    });
  });

  it("applies the token's user: an employee is refused the private dataset as over HTTP", async () => {
    const client = await connectStdio(
      'v2-legacy',
      process.execPath,
      [CLI, 'mcp'],
      env(named.employee),
      REPO_ROOT,
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('query_models');
      const refused = await client.callTool('dataset_rows', { dataset: 'expense_transactions' });
      expect(errorBody(refused)).toMatchObject({ statusCode: 403, error: 'forbidden' });
    } finally {
      await client.close();
    }
  });

  it('sees a revoked token at the next call', async () => {
    const token = await api.namedToken(admin, 'revoked soon');
    const client = await connectStdio(
      'v2-modern',
      process.execPath,
      [CLI, 'mcp'],
      env(token),
      REPO_ROOT,
    );
    try {
      const before = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 1,
      });
      expect(before.isError).toBeFalsy();
      const id = decodeJwt(token).jti as string;
      expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
      const after = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 1,
      });
      expect(errorBody(after)).toMatchObject({ statusCode: 401, error: 'invalid_token' });
    } finally {
      await client.close();
    }
  });

  it('refuses to start without DREY_TOKEN, or with a token it does not accept', async () => {
    const without = await drey(['mcp'], env(undefined));
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('set DREY_TOKEN');
    expect(without.stdout).toBe('');
    const forged = await drey(['mcp'], env(`${named.admin.slice(0, -4)}AAAA`));
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain('DREY_TOKEN was refused');
    expect(forged.stdout).toBe('');
  });
});
