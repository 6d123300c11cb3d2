import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MONTHLY } from './support/figures';
import { Api, P } from './support/api';
import { docScript, statusesOf } from './support/doc-examples';
import { CLI } from './support/drey-cli';
import { TestIdp } from './support/idp';
import { connectMcp, connectStdio } from './support/mcp-clients';
import { ADMIN_PASSWORD, REPO_ROOT, TestServer, startServer } from './support/server';
import { tempDir } from './support/services';

const DOC = join(REPO_ROOT, 'docs', 'mcp.md');

/** The `json` blocks of the page, in order. */
function jsonBlocks(): { mcpServers: Record<string, Record<string, unknown>> }[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)].map(
    (match) => JSON.parse(match[1]) as { mcpServers: Record<string, Record<string, unknown>> },
  );
}

/** Every command of docs/mcp.md, run as written against a server with an identity provider. */
describe('docs/mcp.md', () => {
  const idp = new TestIdp();
  let t: TestServer;
  let api: Api;
  let token: string;

  beforeAll(async () => {
    idp.addKey('rsa-1', 'RS256');
    const issuer = await idp.start();
    t = await startServer({ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'drey-api' });
    api = new Api(t.url);
    const admin = await api.adminToken();
    const named = await api.request('POST', `${P}/tokens`, {
      token: admin,
      json: { title: 'docs' },
    });
    token = named.body.access_token as string;
  });
  afterAll(async () => {
    await t.close();
    await idp.stop();
  });

  it('answers each call by hand with the status the page says', () => {
    const { script, calls } = docScript(DOC);
    expect(calls.length).toBeGreaterThanOrEqual(8);
    const dir = tempDir();
    try {
      const statusFile = join(dir.path, 'statuses');
      writeFileSync(statusFile, '');
      const ran = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
        cwd: dir.path,
        env: { PATH: process.env.PATH ?? '', BASE: t.url, ADMIN_PASSWORD, STATUS_FILE: statusFile },
        encoding: 'utf8',
        timeout: 60000,
      });
      expect(ran.status).toBe(0);
      const statuses = statusesOf(statusFile);
      const wrong = calls.flatMap((call, index) =>
        statuses.get(index) === call.status
          ? []
          : [`docs/mcp.md:${call.line}: ${call.status} written, ${statuses.get(index)} answered`],
      );
      expect(wrong).toEqual([]);
    } finally {
      dir.remove();
    }
  });

  it("connects a hosted assistant as its configuration says: the URL's path and the token header", async () => {
    const hosted = jsonBlocks()[0].mcpServers.expenses as {
      url: string;
      headers: Record<string, string>;
    };
    expect(Object.keys(hosted.headers)).toEqual(['Authorization']);
    const url = `${t.url}${new URL(hosted.url).pathname}`;
    const client = await connectMcp('v2-modern', url, token);
    try {
      const result = await client.callTool('dataset_rows', {
        dataset: 'expenses_by_month',
        limit: 12,
      });
      expect((result.structuredContent as { rows: unknown }).rows).toEqual(MONTHLY);
    } finally {
      await client.close();
    }
  });

  it("starts the desktop assistant's server as its configuration says", async () => {
    const desktop = jsonBlocks()[1].mcpServers.expenses as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    expect(desktop.command).toBe('node');
    expect(desktop.args).toEqual([expect.stringMatching(/dist\/cli\/drey\.js$/), 'mcp']);
    // The page's variables, with this test's values; nothing else but PATH (and no .env of a checkout).
    const values: Record<string, string> = {
      DREY_TOKEN: token,
      PROJECT_DIR: t.env.PROJECT_DIR,
      DATABASE_URL: t.env.DATABASE_URL,
      REDIS_URL: t.env.REDIS_URL,
      DATA_DIR: t.env.DATA_DIR,
      JWT_SECRET: t.env.JWT_SECRET,
    };
    expect(Object.keys(desktop.env).sort()).toEqual(Object.keys(values).sort());
    const cwd = tempDir();
    try {
      const client = await connectStdio(
        'v2-legacy',
        process.execPath,
        [CLI, ...desktop.args.slice(1)],
        { PATH: process.env.PATH ?? '', ENV_FILE: '', ...values },
        cwd.path,
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toContain('query_models');
        const result = await client.callTool('dataset_rows', {
          dataset: 'expenses_by_month',
          limit: 12,
        });
        expect((result.structuredContent as { rows: unknown }).rows).toEqual(MONTHLY);
      } finally {
        await client.close();
      }
    } finally {
      cwd.remove();
    }
  });
});
