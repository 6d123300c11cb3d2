import { spawn } from 'node:child_process';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lockPath, processStartOf, readLock } from '@/database/embedded/embedded-lock';
import { Api, P, decodeJwt } from './support/api';
import { CLI, drey, printedPassword } from './support/drey-cli';
import { MONTHLY } from './support/figures';
import { CLIENT_KINDS, connectStdio, errorBody } from './support/mcp-clients';
import { ADMIN_PASSWORD, LogLine, REPO_ROOT, ServerProcess, baseEnv } from './support/server';
import { TempDir, freePort, tempDir } from './support/services';

/*
 * One writer per embedded database (PGlite under DATA_DIR, no DATABASE_URL): a server holds
 * DATA_DIR/pglite.lock, a second server refuses naming it, the CLI writes through the running server's
 * database, and what the start-up prints about the admin password is true.
 */

type Env = Record<string, string | undefined>;

/** A server's environment on the embedded database and the in-process queue (no Postgres, no Redis). */
function embedded(dir: string, overrides: Env = {}): Record<string, string> {
  return baseEnv(dir, undefined, { REDIS_URL: undefined, ...overrides });
}

/** A start on the embedded database takes long on a busy machine: up to 90 s to listen, 90 s to be ready. */
const start = (env: Record<string, string>) => ServerProcess.start(env, { timeoutMs: 90_000 });

const BANNER = 'Admin password, generated (shown once';

function banner(server: ServerProcess): string | undefined {
  const text = server.stderr.join('');
  if (!text.includes(BANNER)) return undefined;
  return /shown once; kept in [^\n]*\n\n\s+(\S+)\n/.exec(text)?.[1];
}

function warnings(server: ServerProcess): string[] {
  return server.logs
    .filter((line: LogLine) => line.level === 'warn')
    .map((line) => String(line.msg));
}

async function loginStatus(api: Api, password: string): Promise<number> {
  return (await api.request('POST', `${P}/login`, { form: { username: 'admin', password } }))
    .status;
}

/** A pid that ran and no longer does, with its start as the lock records it. */
async function deadProcess(): Promise<{ pid: number; processStart: number | null }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const pid = child.pid as number;
  const processStart = processStartOf(pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return { pid, processStart };
}

describe('one writer per embedded database', () => {
  let dir: TempDir;
  let server: ServerProcess | undefined;

  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    dir.remove();
  });

  it('drey users reset-password beside a running server: the printed password works at once and after restarts, a second server refuses naming the first, the lock goes with the server', async () => {
    const env = embedded(dir.path);
    const cliEnv = { DATA_DIR: dir.path };
    server = await start(env);
    const pid = server.child.pid as number;
    expect(readLock(dir.path)).toMatchObject({ pid, command: 'server', port: expect.any(Number) });
    // Created with ADMIN_PASSWORD: nothing to show.
    expect(banner(server)).toBeUndefined();
    let api = new Api(server.url);
    const token = await api.adminToken();

    // A second server on the same folder refuses before opening anything, naming the first.
    const second = ServerProcess.spawn(env);
    expect(await second.waitExit()).toBe(1);
    expect(second.stderr.join('')).toContain(
      `The embedded database in ${join(dir.path, 'pglite')} is in use by process ${pid} (server, since`,
    );
    expect(second.logs.filter((line) => line.msg === 'listening')).toEqual([]);
    expect(readLock(dir.path)).toMatchObject({ pid });

    // Requests keep going (reads, and writes in transactions) while the CLI writes beside them.
    let busy = true;
    const statuses: number[] = [];
    const traffic = async (round: number) => {
      for (let i = 0; busy; i++) {
        statuses.push((await api.get(`${P}/me`, token)).status);
        statuses.push(
          (
            await api.request('POST', `${P}/tokens`, {
              token,
              json: { title: `during the reset ${round}.${i}` },
            })
          ).status,
        );
        statuses.push((await api.get('/health/ready')).status);
      }
    };
    const load = Promise.all([traffic(0), traffic(1)]);
    const reset = await drey(['users', 'reset-password', 'admin'], cliEnv);
    busy = false;
    await load;
    expect(reset.code).toBe(0);
    expect(reset.stderr).toBe(`(through the database of the running server, pid ${pid})\n`);
    const printed = printedPassword(reset);
    expect(await api.login('admin', printed)).toEqual(expect.any(String));
    expect(await loginStatus(api, ADMIN_PASSWORD)).toBe(401);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    // SIGTERM: the server closes its database and removes its lock.
    expect(await server.stop()).toBe(0);
    expect(existsSync(lockPath(dir.path))).toBe(false);

    // Started again without ADMIN_PASSWORD: the generated one (secrets.json) is not the admin's, which
    // is the password's owner's doing (reset, changed): nothing to act on, so no warning and no box on
    // every start, and no generated password shown as the admin's.
    server = await start(embedded(dir.path, { ADMIN_PASSWORD: undefined }));
    api = new Api(server.url);
    expect(banner(server)).toBeUndefined();
    expect(warnings(server).filter((warning) => /admin|password/i.test(warning))).toEqual([]);
    expect(server.stderr.join('')).not.toContain('='.repeat(72));
    expect(await api.login('admin', printed)).toEqual(expect.any(String));
    expect(await loginStatus(api, ADMIN_PASSWORD)).toBe(401);
    expect(await server.stop()).toBe(0);

    // No server: the CLI opens the database itself, under the same lock, and leaves none behind.
    const own = await drey(['users', 'reset-password', 'admin', '--password-stdin'], cliEnv, {
      input: 'a-password-set-offline\n',
    });
    expect(own).toEqual({ code: 0, stdout: 'The password of "admin" is set.\n', stderr: '' });
    expect(existsSync(lockPath(dir.path))).toBe(false);

    // A lock left by a process that no longer runs (killed, the machine restarted) is taken over, and
    // the log says whose it was. ADMIN_PASSWORD is given again: the start says it was not applied.
    const dead = await deadProcess();
    writeFileSync(
      lockPath(dir.path),
      JSON.stringify({ ...dead, command: 'server', since: '2026-11-25T00:00:00.000Z', port: 1 }),
    );
    server = await start(env);
    api = new Api(server.url);
    expect(server.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'embedded database: took over the lock of a process that no longer runs',
        pid: dead.pid,
      }),
    );
    expect(readLock(dir.path)).toMatchObject({ pid: server.child.pid });
    expect(warnings(server)).toContainEqual(
      expect.stringContaining('ADMIN_PASSWORD was not applied'),
    );
    // Repeated on stderr, where the banner would be.
    expect(server.stderr.join('')).toContain('ADMIN_PASSWORD was not applied');
    expect(await api.login('admin', 'a-password-set-offline')).toEqual(expect.any(String));
    expect(await loginStatus(api, printed)).toBe(401);
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 600_000);
});

describe('drey users beside a holder it cannot reach', () => {
  it('refuses at once, naming the holder, and opens no second database', async () => {
    const dir = tempDir();
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
    });
    try {
      await new Promise((resolve) => holder.once('spawn', resolve));
      const pid = holder.pid as number;
      // A live process that holds the lock but serves nothing on its port (a server stuck, or stopping).
      writeFileSync(
        lockPath(dir.path),
        JSON.stringify({
          pid,
          processStart: processStartOf(pid),
          command: 'server',
          since: '2026-11-26T00:00:00.000Z',
          port: await freePort(),
        }),
      );
      const ran = await drey(['users', 'reset-password', 'admin'], { DATA_DIR: dir.path });
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toContain(`is held by process ${pid} (server, since`);
      expect(ran.stderr).toContain(`Nothing was changed: stop that process (kill ${pid})`);
      expect(existsSync(join(dir.path, 'pglite'))).toBe(false);
      expect(readLock(dir.path)).toMatchObject({ pid });
    } finally {
      holder.kill('SIGKILL');
      dir.remove();
    }
  });
});

describe('the admin password banner', () => {
  const dirs: TempDir[] = [];
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.stop('SIGKILL');
    for (const dir of dirs) dir.remove();
  });

  it('appears when a start creates the admin with a generated password, never again, and not after restoring a copy of pglite/', async () => {
    const first = tempDir();
    dirs.push(first);
    server = await start(embedded(first.path, { ADMIN_PASSWORD: undefined }));
    const generated = banner(server) as string;
    expect(generated).toEqual(expect.any(String));
    expect(await new Api(server.url).login('admin', generated)).toEqual(expect.any(String));
    expect(await server.stop()).toBe(0);

    server = await start(embedded(first.path, { ADMIN_PASSWORD: undefined }));
    expect(server.stderr.join('')).not.toContain(BANNER);
    expect(warnings(server)).toEqual([]);
    expect(server.stderr.join('')).not.toContain('exists already');
    expect(await server.stop()).toBe(0);

    // Restored as docs/operations.md says (a copy of DATA_DIR/pglite), here into a new DATA_DIR without
    // the secrets.json that held the password: the admin keeps the password it had.
    const restored = tempDir();
    dirs.push(restored);
    cpSync(join(first.path, 'pglite'), join(restored.path, 'pglite'), { recursive: true });
    server = await start(embedded(restored.path, { ADMIN_PASSWORD: undefined }));
    expect(server.stderr.join('')).not.toContain(BANNER);
    // Not a password anyone set through ADMIN_PASSWORD: nothing to act on, so no warning at every start.
    expect(warnings(server).filter((warning) => /admin|password/i.test(warning))).toEqual([]);
    const api = new Api(server.url);
    expect(await api.login('admin', generated)).toEqual(expect.any(String));
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 600_000);
});

describe('drey mcp beside a running server on the embedded database', () => {
  let dir: TempDir;
  let server: ServerProcess;
  let api: Api;
  let admin: string;
  /** `drey mcp`'s environment: the server's data folder, no PORT of its own, signed in with `token`. */
  let mcpEnv: (token: string) => Record<string, string>;

  beforeAll(async () => {
    dir = tempDir();
    const env = embedded(dir.path);
    server = await start(env);
    api = new Api(server.url);
    admin = await api.adminToken();
    const { PORT: _port, ...rest } = env;
    mcpEnv = (token) => ({ ...rest, PATH: process.env.PATH ?? '', DREY_TOKEN: token });
  }, 200_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    dir.remove();
  });

  it('the lock names where the server answers', () => {
    expect(readLock(dir.path)).toMatchObject({
      pid: server.child.pid,
      http: server.url,
      prefix: P,
    });
  });

  it.each(CLIENT_KINDS)(
    "relays the %s client to the server's endpoint: tools, rows, the token's user",
    async (kind) => {
      const client = await connectStdio(
        kind,
        process.execPath,
        [CLI, 'mcp'],
        mcpEnv(await api.namedToken(admin, `desktop assistant ${kind}`)),
        REPO_ROOT,
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toContain('query_models');
        const result = await client.callTool('dataset_rows', {
          dataset: 'expenses_by_month',
          limit: 12,
        });
        expect((result.structuredContent as { rows: unknown }).rows).toEqual(MONTHLY);
        expect(client.stderr.join('')).toContain(
          `drey mcp: serving admin over stdio, through the running server (pid ${server.child.pid}`,
        );
      } finally {
        await client.close();
      }
    },
  );

  it("holds an employee's token to its rights, and sees its revocation at the next call", async () => {
    const employee = await api.userToken(admin, 'emp', { role: 'employee' });
    const token = await api.namedToken(employee, 'desktop assistant');
    const client = await connectStdio(
      'v2-legacy',
      process.execPath,
      [CLI, 'mcp'],
      mcpEnv(token),
      REPO_ROOT,
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('query_models');
      const refused = await client.callTool('dataset_rows', { dataset: 'expense_transactions' });
      expect(errorBody(refused)).toMatchObject({ statusCode: 403, error: 'forbidden' });
      const id = decodeJwt(token).jti as string;
      expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: employee })).status).toBe(
        200,
      );
      await expect(
        client.callTool('dataset_rows', { dataset: 'expenses_by_month', limit: 1 }),
      ).rejects.toThrow(/401|nauthorized|invalid_token/);
    } finally {
      await client.close();
    }
  });

  it('refuses a token the server does not accept, at its start', async () => {
    const token = await api.namedToken(admin, 'forged soon');
    const forged = await drey(['mcp'], mcpEnv(`${token.slice(0, -4)}AAAA`));
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain('DREY_TOKEN was refused');
    expect(forged.stdout).toBe('');
    // Nothing opened the database a second time: the server still holds it, and answers.
    expect(readLock(dir.path)).toMatchObject({ pid: server.child.pid });
    expect((await api.get('/health/ready')).status).toBe(200);
  });
});
