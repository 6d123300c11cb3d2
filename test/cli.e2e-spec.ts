import { spawn } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { EXAMPLE_PROJECT, REPO_ROOT, TestServer, baseEnv, startServer } from './support/server';
import { createTestDatabase, tempDir } from './support/services';

const CLI = join(REPO_ROOT, 'dist', 'cli', 'drey.js');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would; `closeAfter` closes its stdout after that many bytes (a `| head`). */
function drey(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; closeAfter?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', PROJECT_DIR: EXAMPLE_PROJECT, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (options.closeAfter !== undefined && stdout.length >= options.closeAfter)
        child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end(options.input ?? '');
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the drey command line, as a process', () => {
  it('stops quietly when its reader closes the pipe early (drey run ... | head)', async () => {
    const dir = tempDir();
    try {
      const env = { DATA_DIR: dir.path };
      expect((await drey(['build'], env)).code).toBe(0);
      const ran = await drey(
        ['run', 'expense_transactions', '--format', 'csv', '--limit', '1000'],
        env,
        { closeAfter: 100 },
      );
      expect(ran.stderr).toBe('');
      expect(ran.code).toBe(0);
    } finally {
      dir.remove();
    }
  });

  describe('users reset-password, on the database of a running service', () => {
    let t: TestServer;
    let api: Api;
    let env: Record<string, string>;

    beforeAll(async () => {
      t = await startServer();
      api = new Api(t.url);
      env = { DATABASE_URL: t.env.DATABASE_URL, DATA_DIR: t.env.DATA_DIR };
    });
    afterAll(async () => {
      await t.close();
    });

    it('sets a password read from standard input; the old one stops working', async () => {
      const admin = await api.adminToken();
      await api.userToken(admin, 'dana');
      const ran = await drey(['users', 'reset-password', 'dana', '--password-stdin'], env, {
        input: 'a-new-password-for-dana\n',
      });
      expect(ran).toMatchObject({ code: 0, stderr: '' });
      expect(ran.stdout).toBe('The password of "dana" is set.\n');
      expect(await api.login('dana', 'a-new-password-for-dana')).toEqual(expect.any(String));
      const old = await api.request('POST', `${P}/login`, {
        form: { username: 'dana', password: 'dana-password' },
      });
      expect(old.status).toBe(401);
    });

    it('generates and prints one when none is given, and refuses unknown users and short passwords', async () => {
      const ran = await drey(['users', 'reset-password', 'admin'], env);
      expect(ran.code).toBe(0);
      const password = /shown once\):\n\s+(\S+)\n$/.exec(ran.stdout)?.[1] as string;
      expect(await api.login('admin', password)).toEqual(expect.any(String));

      const unknown = await drey(['users', 'reset-password', 'nobody', '--password-stdin'], env, {
        input: 'long-enough-password',
      });
      expect(unknown).toMatchObject({ code: 1, stderr: 'there is no user "nobody"\n' });
      const short = await drey(['users', 'reset-password', 'admin', '--password-stdin'], env, {
        input: 'short',
      });
      expect(short).toMatchObject({
        code: 1,
        stderr: 'The password must be at least 8 characters long (PASSWORD_MIN_LENGTH)\n',
      });
    });
  });

  it('reads .env for settings the environment does not set; the environment wins', async () => {
    const dir = tempDir();
    const envFile = join(dir.path, 'drey.env');
    writeFileSync(envFile, 'CORS_ORIGINS=http://client.test\nLOG_LEVEL=error\n');
    const t = await startServer({ ENV_FILE: envFile });
    try {
      const reply = await fetch(`${t.url}/health/live`, {
        headers: { Origin: 'http://client.test' },
      });
      expect(reply.headers.get('access-control-allow-origin')).toBe('http://client.test');
      // LOG_LEVEL=info from the environment, not error from the file: the listening line is there.
      expect(t.server.logs.find((line) => line.msg === 'listening')).toMatchObject({ envFile });
    } finally {
      await t.close();
      dir.remove();
    }
  });

  it('drey dev serves the project, rebuilds it on a change, and prints problems instead of building them', async () => {
    const dir = tempDir();
    const project = join(dir.path, 'project');
    cpSync(EXAMPLE_PROJECT, project, { recursive: true });
    const database = await createTestDatabase();
    const env = baseEnv(join(dir.path, 'data'), database.url, { PROJECT_DIR: project });
    const child = spawn(process.execPath, [CLI, 'dev'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    const logs: Record<string, unknown>[] = [];
    let stderr = '';
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines)
        if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const waitFor = async (what: () => boolean, ms = 30000) => {
      const deadline = Date.now() + ms;
      while (!what()) {
        if (Date.now() > deadline) throw new Error(`timed out; stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const builds = () => logs.filter((line) => line.msg === 'build succeeded').length;
    try {
      await waitFor(() => builds() === 1 && logs.some((line) => line.msg === 'listening'));
      const url = String(logs.find((line) => line.msg === 'listening')?.url);
      const api = new Api(url);
      const fields = async () =>
        (
          (await api.get(`${P}/datasets/expenses_by_month/results`)).body.schema.fields as {
            name: string;
          }[]
        ).map((field) => field.name);
      expect(await fields()).toEqual(['month', 'total_amount']);

      const sql = join(project, 'models', 'expenses_by_month.sql');
      const original = readFileSync(sql, 'utf8');
      writeFileSync(
        sql,
        original.replace(
          'sum(amount) AS total_amount',
          'sum(amount) AS total_amount, count(*) AS n',
        ),
      );
      await waitFor(() => builds() === 2);
      expect(await fields()).toEqual(['month', 'total_amount', 'n']);

      writeFileSync(sql, original.replace('sum(amount)', 'sum(amout)'));
      await waitFor(() => stderr.includes('not rebuilt'));
      expect(stderr).toContain('models/expenses_by_month.sql at line 1, column 19');
      expect(builds()).toBe(2);
      expect(await fields()).toEqual(['month', 'total_amount', 'n']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
      await database.drop();
      dir.remove();
    }
  }, 90000);
});
