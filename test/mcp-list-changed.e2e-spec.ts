import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Api, P } from './support/api';
import { EXAMPLE_PROJECT, TestServer, startServer } from './support/server';

/**
 * A build that changes the project changes the tools (their enums of the items a caller may open), and
 * clients that listen are told: on the 2026-07-28 revision, `subscriptions/listen` streams
 * `notifications/tools/list_changed`.
 */
describe('the MCP server after a build', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;
  let client: Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-mcp-project-'));
    cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
    t = await startServer({ PROJECT_DIR: dir });
    api = new Api(t.url);
    client = new Client(
      { name: 'drey-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}${P}/mcp`)));
  });
  afterAll(async () => {
    await client.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const datasetsListed = async (): Promise<unknown> => {
    const { tools } = await client.listTools();
    const rows = tools.find((tool) => tool.name === 'dataset_rows');
    return (rows?.inputSchema.properties as Record<string, { enum?: string[] }>).dataset.enum;
  };

  it('tells a listening client that the tools changed, which then lists the new ones', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(await datasetsListed()).toEqual(['expenses_by_month']);
    let told = 0;
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        told++;
        resolve();
      }),
    );
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });

    // expenses_grouped made public: anonymous callers may open it after the build.
    const file = join(dir, 'project.yml');
    const yml = readFileSync(file, 'utf8');
    const edited = yml.replace(
      /(- name: expenses_grouped\n(?:.*\n){2}\s*scope:) protected/,
      '$1 public',
    );
    expect(edited).not.toEqual(yml);
    writeFileSync(file, edited);
    const admin = await api.adminToken();
    const build = await api.request('POST', `${P}/build`, { token: admin });
    expect(build.status).toBe(200);

    await changed;
    expect(told).toBeGreaterThanOrEqual(1);
    expect(await datasetsListed()).toEqual(['expenses_by_month', 'expenses_grouped']);
    await subscription.close();
  });
});
