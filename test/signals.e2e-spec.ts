import { ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, P } from './support/api';
import {
  EXAMPLE_PROJECT,
  LogLine,
  REPO_ROOT,
  TestServer,
  baseEnv,
  startServer,
} from './support/server';
import { TempDir, createTestDatabase, tempDir } from './support/services';
import { until } from './support/wait';
import { processAlive } from '@/engine/process/leftovers';

const CLI = join(REPO_ROOT, 'dist', 'cli', 'drey.js');
const SHUTDOWN_TIMEOUT_MS = 4000;

/**
 * A build model slow to compute and small to keep (one row): 3,000,000,000 hashes take minutes on one
 * thread, so a build that ends within seconds of a signal was interrupted. `SLOW_ROWS` makes it quick.
 */
function writeSlowModel(dir: string): void {
  mkdirSync(join(dir, 'models'), { recursive: true });
  writeFileSync(
    join(dir, 'models', 'slow_numbers.yml'),
    'kind: build\ndescription: Many numbers, slowly\n',
  );
  writeFileSync(
    join(dir, 'models', 'slow_numbers.sql'),
    "SELECT count(*) AS n FROM range(0, {{ env_var('SLOW_ROWS', 3000000000) }}) WHERE hash(range) % 7 = 0\n",
  );
}

/** A project of that one model: its build is the slow model from its first moment. */
function slowProject(root: string): string {
  const dir = join(root, 'slow-project');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'project.yml'),
    'name: slow\nlabel: Slow\ndescription: One slow build model\nmajor_version: 1\n',
  );
  writeSlowModel(dir);
  return dir;
}

/** Every file under `dir`, as paths relative to it (the layout of DATA_DIR is not this test's concern). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

function basename(path: string): string {
  return path.split('/').pop() ?? path;
}

interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnCli(args: string[], env: Record<string, string>): Cli {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ENV_FILE: '', ENGINE_THREADS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Resolves once the CLI's build file (`cli-<pid>-...duckdb`) exists under `dataDir`: its build runs. */
async function buildFileOf(cli: Cli, dataDir: string): Promise<string> {
  const prefix = `cli-${cli.child.pid}-`;
  const found = await until(
    () => Promise.resolve(filesUnder(dataDir).find((path) => basename(path).startsWith(prefix))),
    (path) => path !== undefined || cli.child.exitCode !== null,
    30000,
    25,
  );
  if (!found) throw new Error(`no build file appeared: ${cli.stderr()}`);
  return found;
}

describe.each([
  ['with Redis (BullMQ)', {}],
  ['without Redis (in-process queue)', { REDIS_URL: undefined }],
])(
  'a server stopped with SIGINT in the middle of a build, %s',
  (_, overrides: Record<string, string | undefined>) => {
    let project: TempDir;
    let t: TestServer;

    beforeAll(async () => {
      project = tempDir('drey-signals-');
      cpSync(EXAMPLE_PROJECT, project.path, { recursive: true });
      t = await startServer({
        PROJECT_DIR: project.path,
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        ENGINE_THREADS: '1',
        ...overrides,
      });
    });
    afterAll(async () => {
      await t.close();
      project.remove();
    });

    it('interrupts it, answers the waiting POST P/build 503, removes its file, exits in time and records it', async () => {
      let api = new Api(t.url);
      const admin = await api.adminToken();
      // Added once the first build is served: the build asked for below is the slow one.
      writeSlowModel(project.path);
      const reply = api.request('POST', `${P}/build`, { token: admin });
      const running = await until(
        () => api.get(`${P}/builds`, admin),
        (history) =>
          history.body[0]?.status === 'running' &&
          history.body[0]?.progress?.current_model === 'slow_numbers',
        30000,
        50,
      );
      expect(running.body[0].progress.current_model).toBe('slow_numbers');
      const interrupted = running.body[0].id as string;
      const ofTheBuild = () =>
        filesUnder(t.env.DATA_DIR).filter((path) => basename(path).startsWith(interrupted));
      // Its file is being written.
      expect(ofTheBuild().map(basename)).toContain(`${interrupted}.duckdb`);

      const signalled = Date.now();
      const exit = t.server.stop('SIGINT');
      const answer = await reply;
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({
        statusCode: 503,
        error: 'build_interrupted',
        message: expect.stringMatching(/^Interrupted by SIGINT: /),
      });
      expect(await exit).toBe(0);
      const took = Date.now() - signalled;
      expect(took).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5000);
      const logs = t.server.logs;
      expect(logs.find((line) => line.msg === 'build interrupted')).toMatchObject({
        buildId: interrupted,
        reason: 'SIGINT',
      });
      expect(logs.some((line) => line.msg === 'stopped')).toBe(true);
      // Nothing of the interrupted build is left: not its file, its .wal nor its .tmp spill folder.
      expect(ofTheBuild()).toEqual([]);

      // Restarted: the previous build serves, and the history says what happened.
      api = new Api((await t.another()).url);
      expect((await api.get(`${P}/datasets/expenses_by_month/results`)).status).toBe(200);
      const token = await api.adminToken();
      const run = (await api.get(`${P}/builds`, token)).body.find(
        (entry: { id: string }) => entry.id === interrupted,
      );
      expect(run).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/^Interrupted by SIGINT: /),
        progress: { failed_model: 'slow_numbers' },
      });
    });
  },
);

describe('drey build and signals', () => {
  let dir: TempDir;
  let project: string;

  beforeEach(() => {
    dir = tempDir('drey-cli-signals-');
    project = slowProject(dir.path);
  });
  afterEach(() => dir.remove());

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s: interrupts the build, removes its partial files, says so and exits %i',
    async (signal, code) => {
      const dataDir = join(dir.path, 'data');
      const cli = spawnCli(['build', '--project', project], { DATA_DIR: dataDir });
      const file = await buildFileOf(cli, dataDir);
      const signalled = Date.now();
      cli.child.kill(signal);
      const exit = await cli.exit;
      expect(exit).toEqual({ code, signal: null });
      // The model would take minutes: the running statement was interrupted.
      expect(Date.now() - signalled).toBeLessThan(5000);
      const id = basename(file).replace(/\.duckdb$/, '');
      expect(cli.stderr().trim().split('\n').pop()).toBe(
        `Interrupted by ${signal}: build ${id} stopped and its partial files were removed; the ` +
          'current environment is unchanged.',
      );
      expect(filesUnder(dataDir).filter((path) => basename(path).startsWith('cli-'))).toEqual([]);
      expect(filesUnder(dataDir).some((path) => basename(path) === 'current')).toBe(false);
    },
  );

  it('on SIGINT during validate: stops the check, removes its scratch folder, says so and exits 130', async () => {
    // The check builds the project in a scratch folder under the temporary folder: TMPDIR shows it.
    const tmp = join(dir.path, 'tmp');
    mkdirSync(tmp);
    const cli = spawnCli(['validate', '--project', project], { TMPDIR: tmp });
    const scratch = await until(
      () => Promise.resolve(filesUnder(tmp).find((path) => path.endsWith('.duckdb'))),
      (path) => path !== undefined || cli.child.exitCode !== null,
      30000,
      25,
    );
    expect(scratch).toContain('drey-validate-');
    const signalled = Date.now();
    cli.child.kill('SIGINT');
    expect(await cli.exit).toEqual({ code: 130, signal: null });
    expect(Date.now() - signalled).toBeLessThan(5000);
    expect(cli.stderr().trim().split('\n').pop()).toBe(
      'Interrupted by SIGINT: the check stopped and its scratch folder was removed.',
    );
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("removes a killed build's leftovers at the next build, and never a live one's", async () => {
    const dataDir = join(dir.path, 'data');
    const killed = spawnCli(['build', '--project', project], { DATA_DIR: dataDir });
    const file = await buildFileOf(killed, dataDir);
    killed.child.kill('SIGKILL');
    expect((await killed.exit).signal).toBe('SIGKILL');
    expect(existsSync(join(dataDir, file))).toBe(true);
    // What a live process writes (this test's own pid names it) is not a leftover.
    const folder = join(dataDir, file, '..');
    const live = join(folder, `cli-${process.pid}-2026-11-26T00-00-00-000Z.duckdb`);
    writeFileSync(live, '');

    const next = spawnCli(['build', '--project', project], {
      DATA_DIR: dataDir,
      SLOW_ROWS: '1000',
    });
    const done = await next.exit;
    expect(done.code).toBe(0);
    expect(next.stdout()).toMatch(/it is now the current environment/);
    const names = filesUnder(dataDir).map(basename);
    expect(names.filter((name) => name.startsWith(`cli-${killed.child.pid}-`))).toEqual([]);
    expect(existsSync(live)).toBe(true);
    const built = basename(/Built (\S+) in/.exec(next.stdout())?.[1] ?? '');
    // The build, and beside it the project it was built from (served again if the folder breaks).
    expect(names.filter((name) => name.startsWith(`cli-${next.child.pid}-`)).sort()).toEqual([
      built,
      `${built}.project.json`,
    ]);
  });
});

describe('npm start and signals', () => {
  it('names the pid to signal in its listening line, and stops the service on SIGTERM to npm', async () => {
    const data = tempDir();
    const database = await createTestDatabase();
    const logs: LogLine[] = [];
    const npm = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { HOME: process.env.HOME ?? '', ...baseEnv(data.path, database.url, {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let buffer = '';
    npm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        // npm's own banner lines are not JSON.
        if (line.startsWith('{')) logs.push(JSON.parse(line) as LogLine);
      }
    });
    npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => npm.once('close', resolve));
    let pid: number | undefined;
    try {
      const listening = await until(
        () => Promise.resolve(logs.find((line) => line.msg === 'listening')),
        (line) => line !== undefined || npm.exitCode !== null,
        150000,
        50,
      );
      if (!listening) throw new Error(`npm start did not listen: ${stderr}`);
      pid = Number(listening.pid);
      expect(Number.isInteger(pid)).toBe(true);
      // The service is npm's own child (its shell exec'd it), the one npm forwards SIGTERM and SIGINT to.
      expect(pid).not.toBe(npm.pid);
      expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[3]).toBe(String(npm.pid));

      npm.kill('SIGTERM');
      await exited;
      expect(logs.find((line) => line.msg === 'shutting down')).toMatchObject({
        signal: 'SIGTERM',
      });
      expect(logs.some((line) => line.msg === 'stopped')).toBe(true);
      expect(processAlive(pid)).toBe(false);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      // Never left behind by a failure, whatever npm did with the signal.
      if (pid !== undefined && processAlive(pid)) process.kill(pid, 'SIGKILL');
      await database.drop();
      data.remove();
    }
    // A first start of the service under npm, on a machine shared with other tests: up to a minute or two.
  }, 180000);
});
