import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Api, P } from './support/api';
import { CLI } from './support/drey-cli';
import { EXAMPLE_PROJECT, REPO_ROOT, TestServer, startServer } from './support/server';

/**
 * A build that changes the project changes the tools (their enums of the items a caller may open), and
 * clients that listen are told: on the 2026-07-28 revision, `subscriptions/listen` streams
 * `notifications/tools/list_changed`, from whichever replica the client listens on.
 */
describe('the MCP server after a build', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-mcp-project-'));
    cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
    t = await startServer({ PROJECT_DIR: dir });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (url: string): Promise<Client> => {
    const client = new Client(
      { name: 'drey-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${P}/mcp`)));
    return client;
  };

  /** Makes `dataset` public, has the first server build, and waits for `listener` to be told. */
  async function buildTold(listener: Client, dataset: string): Promise<void> {
    const listed = async (): Promise<string[]> => {
      const { tools } = await listener.listTools();
      const rows = tools.find((tool) => tool.name === 'dataset_rows');
      return (rows?.inputSchema.properties as Record<string, { enum: string[] }>).dataset.enum;
    };
    expect(listener.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const before = await listed();
    expect(before).not.toContain(dataset);
    let told = 0;
    const changed = new Promise<void>((resolve) =>
      listener.setNotificationHandler('notifications/tools/list_changed', () => {
        told++;
        resolve();
      }),
    );
    const subscription = await listener.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });

    const file = join(dir, 'project.yml');
    const yml = readFileSync(file, 'utf8');
    const edited = yml.replace(
      new RegExp(`(- name: ${dataset}\\n(?:.*\\n){2}\\s*scope:) (protected|private)`),
      '$1 public',
    );
    expect(edited).not.toEqual(yml);
    writeFileSync(file, edited);
    const admin = await api.adminToken();
    const build = await api.request('POST', `${P}/build`, { token: admin });
    expect(build.status).toBe(200);

    await changed;
    expect(told).toBeGreaterThanOrEqual(1);
    expect((await listed()).sort()).toEqual([...before, dataset].sort());
    await subscription.close();
  }

  it('tells a listening client that the tools changed, which then lists the new ones', async () => {
    const client = await connect(t.url);
    try {
      await buildTold(client, 'expenses_grouped');
    } finally {
      await client.close();
    }
  });

  it('tells a client listening on another replica too, once that replica follows the build', async () => {
    const replica = await t.another();
    const client = await connect(replica.url);
    try {
      await buildTold(client, 'expense_transactions');
    } finally {
      await client.close();
    }
  });

  it('tells a 2025 client of drey mcp over stdio, whose tools then describe the new build', async () => {
    const admin = await api.adminToken();
    await api.userToken(admin, 'emp', { role: 'employee' });
    const employee = await api.login('emp', 'emp-password');
    const named = await api.request('POST', `${P}/tokens`, {
      token: employee,
      json: { title: 'desktop' },
    });
    const { PORT: _port, ...env } = t.env;
    const client = new Client({ name: 'drey-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { ...env, DREY_TOKEN: named.body.access_token as string },
        cwd: REPO_ROOT,
        stderr: 'ignore',
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const described = async (): Promise<string> => {
        const { tools } = await client.listTools();
        const rows = tools.find((tool) => tool.name === 'dataset_rows');
        return (rows?.inputSchema.properties as Record<string, { description: string }>).dataset
          .description;
      };
      expect(await described()).toContain('expenses_by_month: Expenses by Month');
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
      );
      const file = join(dir, 'project.yml');
      const yml = readFileSync(file, 'utf8');
      const edited = yml.replace('label: Expenses by Month', 'label: Monthly Expenses');
      expect(edited).not.toEqual(yml);
      writeFileSync(file, edited);
      const build = await api.request('POST', `${P}/build`, { token: admin });
      expect(build.status).toBe(200);
      await changed;
      expect(await described()).toContain('expenses_by_month: Monthly Expenses');
    } finally {
      await client.close();
    }
  });
});
