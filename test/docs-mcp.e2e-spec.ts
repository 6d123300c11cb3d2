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
    // As the page says: the assistant's own user (no administrator), and a named token of it.
    const admin = await api.adminToken();
    const added = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'desktop-assistant', password: 'a password of its own' },
    });
    expect(added.status).toBe(200);
    const login = await api.login('desktop-assistant', 'a password of its own');
    const named = await api.request('POST', `${P}/tokens`, {
      token: login,
      json: { title: 'docs' },
    });
    token = named.body.access_token as string;
  });

  /** The page's calls by hand as one script, run with `env` (BASE and STATUS_FILE added). */
  function runByHand(env: Record<string, string>) {
    const { script, calls } = docScript(DOC);
    const dir = tempDir();
    try {
      const statusFile = join(dir.path, 'statuses');
      writeFileSync(statusFile, '');
      const ran = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
        cwd: dir.path,
        env: { PATH: process.env.PATH ?? '', BASE: t.url, STATUS_FILE: statusFile, ...env },
        encoding: 'utf8',
        timeout: 60000,
      });
      return {
        ran,
        calls,
        statuses: statusesOf(statusFile),
        said: readFileSync(statusFile, 'utf8'),
      };
    } finally {
      dir.remove();
    }
  }

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
        expect(tools.map((tool) => tool.name)).toContain('dataset_rows');
        expect(tools.map((tool) => tool.name)).not.toContain('query_models');
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

  it('stops at once without the admin password, naming ADMIN_PASSWORD, and assumes none', () => {
    const { ran, statuses } = runByHand({});
    expect(ran.status).not.toBe(0);
    expect(ran.stderr).toContain(
      'set ADMIN_PASSWORD to the admin password the first npm start printed',
    );
    expect(statuses.size).toBe(0);
  });

  it('shows a refused login as curl -f does, instead of sending its body on as a token', () => {
    const { statuses, said } = runByHand({ ADMIN_PASSWORD: 'not the admin password' });
    expect(statuses.get(0)).toBe(401);
    expect(said).toContain('The requested URL returned error: 401');
  });
  afterAll(async () => {
    await t.close();
    await idp.stop();
  });

  it('answers each call by hand with the status the page says, as a user that is no administrator', () => {
    const { ran, calls, statuses } = runByHand({ ADMIN_PASSWORD });
    expect(calls.length).toBeGreaterThanOrEqual(10);
    expect(ran.status).toBe(0);
    const wrong = calls.flatMap((call, index) =>
      statuses.get(index) === call.status
        ? []
        : [`docs/mcp.md:${call.line}: ${call.status} written, ${statuses.get(index)} answered`],
    );
    expect(wrong).toEqual([]);
    // The assistant's token is its own user's: no query_models, which reads every model.
    expect(ran.stdout).toContain('"name":"dataset_rows"');
    expect(ran.stdout).not.toContain('"name":"query_models"');
  });
});
