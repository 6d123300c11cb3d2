import { Api, P } from './support/api';
import { CLI } from './support/drey-cli';
import { REPO_ROOT, TestServer, startServer } from './support/server';
import {
  McpTestClient,
  ToolInfo,
  ToolResult,
  connectMcp,
  connectStdio,
} from './support/mcp-clients';
import { until } from './support/wait';

/** What a call came to: a tool result, or the JSON-RPC error the client threw. */
type Outcome = { result: ToolResult } | { protocolError: string };

async function attempt(client: McpTestClient, name: string, args: unknown): Promise<Outcome> {
  try {
    return { result: await client.callTool(name, args as Record<string, unknown>) };
  } catch (error) {
    return { protocolError: error instanceof Error ? error.message : String(error) };
  }
}

/** The HTTP body a refused tool call carries, or the protocol error's message. */
function refusalOf(outcome: Outcome): { error?: string; message: string } {
  if ('protocolError' in outcome) return { message: outcome.protocolError };
  expect(outcome.result.isError).toBe(true);
  expect(outcome.result.structuredContent).toBeUndefined();
  return JSON.parse(outcome.result.content[0].text ?? '') as { error: string; message: string };
}

interface Refused {
  kind: string;
  /** Called with the administrator's connection, or the employee's. */
  as: 'admin' | 'emp';
  tool: string;
  args: unknown;
  /** The code the audit row and the metric carry. */
  code: string;
  /** The tool label the metric counts it under. */
  label: string;
  /** What the answer says (the argument at fault, for a check of the arguments). */
  says: RegExp;
  /**
   * Refused by the HTTP door before it is an MCP call: a body nested past the JSON parser's depth bound is
   * no call at all. (A NUL or a lone surrogate is the call's to refuse, audited, at every door.)
   */
  httpDoor?: boolean;
}

const deep = (levels: number): unknown => {
  let value: unknown = 'x';
  for (let level = 0; level < levels; level++) value = { a: value };
  return value;
};

/** Sixteen and more ways an assistant, or an attacker holding its token, gets a call refused. */
const REFUSED: Refused[] = [
  {
    kind: 'an unknown tool',
    as: 'admin',
    tool: 'drop_everything',
    args: {},
    code: 'not_found',
    label: 'unknown',
    says: /drop_everything/,
  },
  {
    kind: 'query_models by a non-administrator',
    as: 'emp',
    tool: 'query_models',
    args: { sql: 'SELECT 1' },
    code: 'forbidden',
    label: 'query_models',
    says: /query_models/,
  },
  {
    kind: 'a wrongly typed argument',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 5 },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments\.dataset must be a string$/,
  },
  {
    kind: 'an extra property',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 'expenses_by_month', foo: 1 },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments: unknown property "foo"$/,
  },
  {
    kind: 'a missing argument',
    as: 'admin',
    tool: 'dataset_parameters',
    args: {},
    code: 'invalid_request',
    label: 'dataset_parameters',
    says: /^arguments\.dataset is required$/,
  },
  {
    kind: 'a wrongly typed list item',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 'expenses_by_month', columns: ['month', 3] },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments\.columns\[1\] must be a string$/,
  },
  {
    kind: 'a fractional limit',
    as: 'admin',
    tool: 'query_models',
    args: { sql: 'SELECT 1', limit: 1.5 },
    code: 'invalid_request',
    label: 'query_models',
    says: /^arguments\.limit must be a whole number$/,
  },
  {
    kind: 'a NUL in the SQL',
    as: 'admin',
    tool: 'query_models',
    args: { sql: 'SELECT 1 AS ok\u0000; SELECT * FROM expenses' },
    code: 'invalid_request',
    label: 'query_models',
    says: /^arguments\.sql holds a NUL character/,
  },
  {
    kind: 'a lone surrogate in a selection',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 'expenses_by_month', selections: { start_date: '2024\ud800' } },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments\.selections\.start_date holds a NUL character or an unpaired UTF-16 surrogate/,
  },
  {
    kind: 'a NUL in a selection name',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 'expenses_by_month', selections: { 'start\u0000date': '2024-01-01' } },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments\.selections has a key that holds a NUL/,
  },
  {
    kind: 'a huge string',
    as: 'admin',
    tool: 'query_models',
    args: { sql: `SELECT 1 -- ${'x'.repeat(100_000)}` },
    code: 'invalid_request',
    label: 'query_models',
    says: /^arguments\.sql is longer than 100000 characters$/,
  },
  {
    kind: 'too many keys',
    as: 'admin',
    tool: 'dataset_rows',
    args: {
      dataset: 'expenses_by_month',
      selections: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`p${i}`, i])),
    },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^arguments\.selections takes the input past 1000 members/,
  },
  {
    kind: 'a nesting too deep',
    as: 'admin',
    tool: 'dataset_rows',
    // 33 levels under `arguments`; over HTTP the body's own depth bound refuses it first.
    args: { dataset: 'expenses_by_month', selections: deep(32) },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /nests deeper than 32 levels$/,
    httpDoor: true,
  },
  {
    kind: 'a limit past the cap (the service refuses it)',
    as: 'admin',
    tool: 'dataset_rows',
    args: { dataset: 'expenses_by_month', limit: 1_000_000 },
    code: 'invalid_request',
    label: 'dataset_rows',
    says: /^limit must be a whole number from 0 to/,
  },
  {
    kind: 'a private dataset for an employee (the service refuses it)',
    as: 'emp',
    tool: 'dataset_rows',
    args: { dataset: 'expense_transactions' },
    code: 'forbidden',
    label: 'dataset_rows',
    says: /expense_transactions/,
  },
  {
    kind: 'a NUL in the tool name',
    as: 'admin',
    tool: 'cata\u0000log',
    args: {},
    code: 'not_found',
    label: 'unknown',
    says: /not found/,
  },
  {
    kind: 'arguments that are a list, not an object',
    as: 'admin',
    tool: 'catalog',
    args: ['x'],
    code: 'invalid_request',
    label: 'catalog',
    says: /arguments/,
  },
];

/** The rows of the MCP tool calls of `actor`, newest first (this replica writes its rows first). */
async function auditRows(api: Api, admin: string, actor: string) {
  const page = await api.get(
    `${P}/audit?action=mcp_tool_call&actor=${encodeURIComponent(actor)}&limit=1000`,
    admin,
  );
  expect(page.status).toBe(200);
  return page.body.events as {
    actor: string | null;
    target: string | null;
    outcome: string;
    details: Record<string, unknown>;
  }[];
}

/** drey_mcp_tool_calls_total by `tool/outcome`. */
async function toolCalls(api: Api, admin: string): Promise<Map<string, number>> {
  const text = (await api.get('/metrics', admin)).text;
  const counts = new Map<string, number>();
  for (const match of text.matchAll(
    /^drey_mcp_tool_calls_total\{tool="([^"]*)",outcome="([^"]*)"\} (\d+)$/gm,
  )) {
    counts.set(`${match[1]}/${match[2]}`, Number(match[3]));
  }
  return counts;
}

const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

describe('refused MCP calls', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let employee: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    employee = await api.userToken(admin, 'emp', { role: 'employee' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('over HTTP', () => {
    const clients: Record<'admin' | 'emp', McpTestClient>[] = [];
    let as: Record<'admin' | 'emp', McpTestClient>;
    beforeAll(async () => {
      as = {
        admin: await connectMcp('v2-modern', `${t.url}${P}/mcp`, admin),
        emp: await connectMcp('v2-modern', `${t.url}${P}/mcp`, employee),
      };
      clients.push(as);
    });
    afterAll(async () => {
      await Promise.all(clients.flatMap((pair) => [pair.admin.close(), pair.emp.close()]));
    });

    it.each(REFUSED.filter((refused) => !refused.httpDoor).map((r) => [r.kind, r] as const))(
      '%s: one audit row, one count, and an answer that says why',
      async (_kind, refused) => {
        const actor = refused.as;
        const rowsBefore = (await auditRows(api, admin, actor)).length;
        const countsBefore = await toolCalls(api, admin);
        const outcome = await attempt(as[refused.as], refused.tool, refused.args);
        const answer = refusalOf(outcome);
        expect(answer.message).toMatch(refused.says);
        if ('result' in outcome && refused.code !== 'not_found') {
          expect(answer.error).toBe(refused.code);
        }
        const rows = await auditRows(api, admin, actor);
        expect(rows.length).toBe(rowsBefore + 1);
        expect(rows[0]).toMatchObject({ actor, outcome: 'failure' });
        expect(rows[0].details.error).toBe(refused.code);
        const counts = await toolCalls(api, admin);
        expect(sum(counts)).toBe(sum(countsBefore) + 1);
        const key = `${refused.label}/${refused.code}`;
        expect(counts.get(key)).toBe((countsBefore.get(key) ?? 0) + 1);
      },
    );

    /** A tools/call POSTed as the administrator without a client, for what no client would send. */
    const toolsCallByHand = (id: number, params: unknown) =>
      fetch(`${t.url}${P}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${admin}`,
          Accept: 'application/json, text/event-stream',
          'Content-Type': 'application/json',
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      });

    it('refuses a body nested past the JSON depth bound at the HTTP door, as every route', async () => {
      for (const refused of REFUSED.filter((r) => r.httpDoor)) {
        const reply = await toolsCallByHand(7, { name: refused.tool, arguments: refused.args });
        expect(reply.status).toBe(400);
        expect(await reply.json()).toMatchObject({ statusCode: 400 });
      }
    });

    it('audits a tools/call whose envelope the SDK refuses, sent by hand', async () => {
      const rowsBefore = (await auditRows(api, admin, 'admin')).length;
      const countsBefore = await toolCalls(api, admin);
      const reply = await toolsCallByHand(8, { name: 42, arguments: 'none' });
      expect(reply.status).toBe(200);
      expect(await reply.text()).toContain('"error"');
      const rows = await auditRows(api, admin, 'admin');
      expect(rows.length).toBe(rowsBefore + 1);
      expect(rows[0].details.error).toBe('invalid_request');
      const counts = await toolCalls(api, admin);
      expect(sum(counts)).toBe(sum(countsBefore) + 1);
      expect(counts.get('unknown/invalid_request')).toBe(
        (countsBefore.get('unknown/invalid_request') ?? 0) + 1,
      );
    });
  });

  describe('over stdio (drey mcp)', () => {
    const named = async (token: string) => {
      const reply = await api.request('POST', `${P}/tokens`, {
        token,
        json: { title: 'refusals' },
      });
      expect(reply.status).toBe(200);
      return reply.body.access_token as string;
    };
    let as: Record<'admin' | 'emp', McpTestClient>;
    beforeAll(async () => {
      const { PORT: _port, ...env } = t.env;
      const stdio = async (token: string) =>
        connectStdio(
          'v2-modern',
          process.execPath,
          [CLI, 'mcp'],
          { ...env, DREY_TOKEN: await named(token) },
          REPO_ROOT,
        );
      as = { admin: await stdio(admin), emp: await stdio(employee) };
    });
    afterAll(async () => {
      await Promise.all([as.admin.close(), as.emp.close()]);
    });

    it('refuses a NUL in query_models’ SQL with a 400 tool error, and audits the refusal', async () => {
      const sql = 'SELECT 1 AS ok\u0000; SELECT * FROM expenses';
      const before = (await auditRows(api, admin, 'admin')).length;
      const outcome = await attempt(as.admin, 'query_models', { sql });
      expect(refusalOf(outcome)).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message:
          'arguments.sql holds a NUL character or an unpaired UTF-16 surrogate, which no input may contain',
      });
      // Written by the stdio process: read until it is there.
      const rows = await until(
        () => auditRows(api, admin, 'admin'),
        (events) => events.length > before,
      );
      expect(rows.length).toBe(before + 1);
      expect(rows[0]).toMatchObject({
        actor: 'admin',
        outcome: 'failure',
        target: 'SELECT 1 AS ok\uFFFD; SELECT * FROM expenses',
        details: { tool: 'query_models', error: 'invalid_request' },
      });
    });

    it.each(REFUSED.map((r) => [r.kind, r] as const))(
      '%s: refused, with exactly one audit row',
      async (_kind, refused) => {
        const actor = refused.as;
        const before = (await auditRows(api, admin, actor)).length;
        const outcome = await attempt(as[refused.as], refused.tool, refused.args);
        const answer = refusalOf(outcome);
        expect(answer.message).toMatch(refused.says);
        if ('result' in outcome && refused.code !== 'not_found') {
          expect(answer.error).toBe(refused.code);
        }
        // A call the client cannot send is no refusal of the server's: none is made then.
        const rows = await until(
          () => auditRows(api, admin, actor),
          (events) => events.length > before,
        );
        expect(rows.length).toBe(before + 1);
        expect(rows[0]).toMatchObject({ actor, outcome: 'failure' });
        expect(rows[0].details.error).toBe(refused.code);
      },
    );
  });

  describe('an embedding token', () => {
    const issue = async (body: Record<string, unknown>) => {
      const reply = await api.request('POST', `${P}/embed-tokens`, { token: admin, json: body });
      expect(reply.status).toBe(201);
      return reply.body as { token: string; id: string };
    };

    it('is listed only its item, without its locked parameters, whoever else shares its subject', async () => {
      // Both name the same viewer: the tool lists kept per viewer must tell the grants apart.
      const datasetToken = await issue({
        dataset: 'expense_transactions',
        params: { category: ['0'] },
        subject: 'viewer-1',
      });
      const dashboardToken = await issue({ dashboard: 'expenses_report', subject: 'viewer-1' });
      const dataset = await connectMcp('v2-modern', `${t.url}${P}/mcp`, datasetToken.token);
      const dashboard = await connectMcp('v2-modern', `${t.url}${P}/mcp`, dashboardToken.token);
      try {
        const datasetTools = (await dataset.listTools()).tools;
        expect(datasetTools.map((tool) => tool.name)).toEqual([
          'catalog',
          'dataset_parameters',
          'dataset_rows',
        ]);
        const rows = datasetTools.find((tool) => tool.name === 'dataset_rows') as ToolInfo;
        expect(rows.inputSchema.properties?.dataset.enum).toEqual(['expense_transactions']);
        const selections = Object.keys(rows.inputSchema.properties?.selections.properties ?? {});
        expect(selections).not.toContain('category');
        expect(selections).toContain('description_filter');
        expect(JSON.stringify(datasetTools)).not.toContain('"category"');

        const dashboardTools = (await dashboard.listTools()).tools;
        expect(dashboardTools.map((tool) => tool.name)).toEqual(['catalog', 'dashboard']);
        const listed = JSON.stringify(dashboardTools);
        expect(listed).not.toContain('expense_transactions');
        expect(listed).not.toContain('description_filter');
        const item = dashboardTools.find((tool) => tool.name === 'dashboard') as ToolInfo;
        expect(item.inputSchema.properties?.dashboard.enum).toEqual(['expenses_report']);

        // What is not listed is refused, and audited as such.
        const other = await attempt(dashboard, 'dataset_rows', { dataset: 'expense_transactions' });
        expect(refusalOf(other).message).toMatch(/dataset_rows/);
        const locked = await attempt(dataset, 'dataset_rows', {
          dataset: 'expense_transactions',
          selections: { category: ['1'] },
        });
        expect(refusalOf(locked)).toMatchObject({ error: 'invalid_parameter_selection' });
        // The audit names each token's holder by the viewer and the token's id.
        const [lockedRow] = await auditRows(api, admin, `embed:viewer-1#${datasetToken.id}`);
        expect(lockedRow.details).toMatchObject({ error: 'invalid_parameter_selection' });
        const [otherRow] = await auditRows(api, admin, `embed:viewer-1#${dashboardToken.id}`);
        expect(otherRow).toMatchObject({
          target: 'expense_transactions',
          details: { tool: 'dataset_rows', error: 'forbidden' },
        });
      } finally {
        await Promise.all([dataset.close(), dashboard.close()]);
      }
    });
  });
});
