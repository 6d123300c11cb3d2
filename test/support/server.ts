import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  REDIS_URL,
  TempDir,
  TestDatabase,
  createTestDatabase,
  tempDir,
  uniqueName,
} from './services';

export const REPO_ROOT = join(__dirname, '..', '..');
export const MAIN = join(REPO_ROOT, 'dist', 'main.js');
export const EXAMPLE_PROJECT = join(REPO_ROOT, 'examples', 'expenses');
/** The benchmark's project: a generated orders table of ORDERS_ROWS rows and two datasets over it. */
export const BENCH_PROJECT = join(REPO_ROOT, 'bench', 'project');
export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const JWT_SECRET = 'a-test-secret-that-is-long-enough-0123456789';

export type LogLine = Record<string, unknown>;
type Env = Record<string, string | undefined>;

/**
 * A server process of the built service (`dist/main.js`, which `npm test` builds first), on a random port.
 * Nest 12 ships as ES modules that Jest's module loader cannot require on Node 20, and a real process is
 * what users run anyway: the tests speak HTTP to it and read its log lines.
 */
export class ServerProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  url = '';
  private exited?: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly env: Record<string, string>,
  ) {}

  /**
   * `cwd`: where it runs, the checkout by default (relative defaults such as `.data` are read from it);
   * `main`: another installation's `dist/main.js` (a copy the test may change under the process).
   */
  static spawn(env: Record<string, string>, cwd = REPO_ROOT, main = MAIN): ServerProcess {
    const child = spawn(process.execPath, [main], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(child, env);
    server.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    let buffer = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          server.logs.push(JSON.parse(line) as LogLine);
        } catch {
          server.logs.push({ raw: line });
        }
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => server.stderr.push(chunk));
    return server;
  }

  /**
   * Resolves with the URL once the server listens; rejects if it exits first. The default is generous: with
   * the embedded database, a start took 40 s on a machine busy with other test runs.
   */
  async listening(timeoutMs = 90000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let exitCode: number | null | undefined;
    void this.exited?.then((code) => (exitCode = code));
    while (Date.now() < deadline) {
      const line = this.logs.find((entry) => entry.msg === 'listening');
      if (line) {
        this.url = String(line.url);
        return this.url;
      }
      if (exitCode !== undefined) {
        throw new Error(`server exited with ${exitCode}: ${this.stderr.join('')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`server did not listen within ${timeoutMs} ms: ${this.stderr.join('')}`);
  }

  /**
   * Spawns the service with exactly `env` and resolves once it listens and, unless `ready` is false, once
   * its first build is served (`/health/ready` answers 200). A process that does not get there is killed
   * before the error is thrown, so a failed start leaves nothing running. The database and data folder
   * are the caller's; `startServer` makes both.
   */
  static async start(
    env: Record<string, string>,
    options: { cwd?: string; main?: string; ready?: boolean; timeoutMs?: number } = {},
  ): Promise<ServerProcess> {
    const server = ServerProcess.spawn(env, options.cwd, options.main);
    try {
      await server.listening(options.timeoutMs);
      if (options.ready !== false) await server.ready(options.timeoutMs);
    } catch (error) {
      await server.stop('SIGKILL');
      throw error;
    }
    return server;
  }

  /** Sends a signal and resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return (await this.exited) ?? null;
  }

  waitExit(): Promise<number | null> {
    return this.exited ?? Promise.resolve(null);
  }

  /** Resolves once `/health/ready` answers 200 (the first build done); throws after the timeout. */
  async ready(timeoutMs = 60000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = await fetch(`${this.url}/health/ready`).catch(() => undefined);
      if (response?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`server not ready within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Log lines of one request id. */
  linesOf(requestId: string): LogLine[] {
    return this.logs.filter((line) => line.requestId === requestId);
  }
}

export interface TestServer {
  server: ServerProcess;
  url: string;
  env: Record<string, string>;
  /** Starts another server process on the same database, Redis prefix and data folder. */
  another(overrides?: Env): Promise<ServerProcess>;
  close(): Promise<void>;
}

export function baseEnv(
  dataDir: string,
  databaseUrl: string | undefined,
  overrides: Env,
): Record<string, string> {
  const merged: Env = {
    NODE_ENV: 'test',
    // A developer's .env must not reach the tests' servers.
    ENV_FILE: '',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    PROJECT_DIR: EXAMPLE_PROJECT,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: uniqueName('drey'),
    JWT_SECRET,
    ADMIN_PASSWORD,
    // The benchmark project's generated orders table (2,000,000 rows by default) is kept small in tests.
    ORDERS_ROWS: '20000',
    // Tests fire bursts of uncached queries and renders from one address; the per-caller limits are
    // tested on their own (caller-limits.e2e-spec.ts), with small values.
    CALLER_MAX_QUERIES: '10000',
    CALLER_MAX_EXPORTS: '10000',
    CALLER_MAX_RENDERS: '10000',
    // The machine's Chromium when it is not at the default /usr/bin/chromium: with Debian's
    // chromium-headless-shell, its binary /usr/lib/chromium/chromium-headless-shell (the script in
    // /usr/bin runs it as a child of its own, where the tests that kill Chromium look for the server's child).
    CHROMIUM_PATH: process.env.CHROMIUM_PATH,
    ...overrides,
  };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(merged)) if (value !== undefined) env[key] = value;
  return env;
}

/**
 * Starts a server on the real Postgres (a database of its own) and the real Redis (a key prefix of its own).
 * An override set to undefined removes the variable (`{ DATABASE_URL: undefined }` means embedded PGlite).
 * `main`: the script to run instead of the checkout's `dist/main.js` (another installation's, a wrapper),
 * for this server and the others it starts.
 */
export async function startServer(
  overrides: Env = {},
  waitReady = true,
  main = MAIN,
): Promise<TestServer> {
  const ownDatabase: TestDatabase | undefined =
    'DATABASE_URL' in overrides ? undefined : await createTestDatabase();
  const dataDir: TempDir = tempDir();
  const env = baseEnv(dataDir.path, ownDatabase?.url, overrides);
  const servers: ServerProcess[] = [];
  const start = async (extra: Env = {}) => {
    const fullEnv = { ...env };
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete fullEnv[key];
      else fullEnv[key] = value;
    }
    // Most tests want data: wait for the environment (the first build) unless told not to.
    const server = await ServerProcess.start(fullEnv, { ready: waitReady, main });
    servers.push(server);
    return server;
  };
  let first: ServerProcess;
  try {
    first = await start();
  } catch (error) {
    // ServerProcess.start has killed a process that did not start.
    await ownDatabase?.drop();
    dataDir.remove();
    throw error;
  }
  return {
    server: first,
    url: first.url,
    env,
    another: start,
    async close() {
      await Promise.all(servers.map((server) => server.stop()));
      await ownDatabase?.drop();
      dataDir.remove();
    },
  };
}
