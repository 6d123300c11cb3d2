import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, BENCH_P, P } from './support/api';
import {
  BENCH_PROJECT,
  EXAMPLE_PROJECT,
  LogLine,
  REPO_ROOT,
  ServerProcess,
  TestServer,
  baseEnv,
  startServer,
} from './support/server';
import { REDIS_URL, TempDir, tempDir, uniqueName } from './support/services';

const CLI = join(REPO_ROOT, 'dist', 'cli', 'drey.js');

// Each test starts servers one after another, some on the embedded database (up to 40 s each when the
// machine is busy), and builds: far more than the usual minute.
jest.setTimeout(420_000);

/** Runs the built CLI as a user would, from `cwd` (the checkout unless told). */
function drey(
  args: string[],
  env: Record<string, string>,
  cwd = REPO_ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        ENV_FILE: '',
        PROJECT_DIR: EXAMPLE_PROJECT,
        // The orders project's generated table, kept small.
        ORDERS_ROWS: '2000',
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const pointer = (dataDir: string) =>
  readFileSync(join(dataDir, 'environments', 'current'), 'utf8').split('\n');

async function readiness(server: ServerProcess) {
  const reply = await new Api(server.url).get('/health/ready');
  const environment = (reply.body as { checks: { environment: Record<string, string> } }).checks
    .environment;
  return { status: reply.status, environment };
}

/** Waits for a log line (the server writes it when it happens; no sleeping on a guess). */
async function logged(
  server: ServerProcess,
  match: (line: LogLine) => boolean,
  timeoutMs = 60000,
): Promise<LogLine> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = server.logs.find(match);
    if (line) return line;
    if (Date.now() > deadline) {
      throw new Error(`no such log line within ${timeoutMs} ms: ${JSON.stringify(server.logs)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const byMonth = async (url: string) => {
  const reply = await new Api(url).get(`${P}/datasets/expenses_by_month/results`);
  return { status: reply.status, body: reply.body as { data?: unknown[] } };
};

describe('a build belongs to its project', () => {
  const dirs: TempDir[] = [];
  const temp = () => {
    const dir = tempDir();
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((dir) => dir.remove()));

  describe('the issue: a CLI build of another project into the data folder a server uses', () => {
    let t: TestServer;
    // Embedded database: no store to fetch its own build back from, so a restart has to rebuild.
    beforeAll(async () => {
      t = await startServer({ DATABASE_URL: undefined });
    });
    afterAll(() => t.close());

    it('leaves the server on its own build, ready; a restart rebuilds instead of failing', async () => {
      const dataDir = t.env.DATA_DIR;
      const before = await byMonth(t.url);
      expect(before.status).toBe(200);
      expect(before.body.data?.length).toBeGreaterThan(0);
      const served = (await readiness(t.server)).environment.build;
      expect(pointer(dataDir).slice(0, 2)).toEqual([served, 'expenses v1']);

      const built = await drey(['build', '--project', BENCH_PROJECT], { DATA_DIR: dataDir });
      expect(built.stderr).toBe('');
      expect(built.code).toBe(0);
      const [shopBuild, shopProject] = pointer(dataDir);
      expect(shopProject).toBe('orders v1');

      // The server's next requests see the pointer moved to the other project's build, and stay.
      const after = await byMonth(t.url);
      expect(after).toEqual(before);
      expect(await readiness(t.server)).toEqual({
        status: 200,
        environment: { status: 'up', kind: 'duckdb', build: served },
      });
      const warning = await logged(
        t.server,
        (line) => line.msg === 'build of another project not served',
      );
      expect(warning).toMatchObject({
        level: 'warn',
        buildId: shopBuild,
        builtFrom: 'orders v1',
        serves: 'expenses v1',
        served,
      });
      // The CLI of the served project says what it found instead of running on the other's tables.
      const run = await drey(['run', 'expenses_by_month'], { DATA_DIR: dataDir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`its current build ${shopBuild} is of orders v1`);

      await t.server.stop();
      const restarted = await t.another();
      const reason = await logged(
        restarted,
        (line) => line.msg === 'building: the data folder holds no build of this project',
      );
      expect(reason).toMatchObject({
        found: shopBuild,
        builtFrom: 'orders v1',
        serves: 'expenses v1',
      });
      const rebuilt = (await readiness(restarted)).environment.build;
      expect(rebuilt).not.toBe(served);
      expect(rebuilt).not.toBe(shopBuild);
      expect(await byMonth(restarted.url)).toEqual(before);
      // The pointer names this project's build again. The other project's, which nothing names any more, is
      // a finished `drey build` of a process gone: the next build's sweep of leftovers may remove it.
      expect(pointer(dataDir).slice(0, 2)).toEqual([rebuilt, 'expenses v1']);
    });
  });

  it('keeps each project in its own folder under .data when DATA_DIR is not set', async () => {
    const cwd = temp().path;
    // An earlier version's single-project state directly in .data: kept, and the way back is said.
    mkdirSync(join(cwd, '.data', 'environments'), { recursive: true });
    const expenses = await drey(['build'], {}, cwd);
    expect(expenses.code).toBe(0);
    expect(expenses.stderr).toContain(`To keep using the earlier state`);
    expect(expenses.stderr).toContain(`set DATA_DIR=${join(cwd, '.data')}`);
    const orders = await drey(['build', '--project', BENCH_PROJECT], {}, cwd);
    expect(orders.code).toBe(0);
    expect(pointer(join(cwd, '.data', 'expenses'))[1]).toBe('expenses v1');
    expect(pointer(join(cwd, '.data', 'orders'))[1]).toBe('orders v1');
    const run = await drey(['run', 'expenses_by_month', '--format', 'json'], {}, cwd);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).not.toHaveLength(0);

    // The server of the same checkout, without DATA_DIR: the expenses folder, and the CLI's build in it.
    const env = baseEnv('', undefined, {});
    delete env.DATA_DIR;
    const server = await ServerProcess.start(env, { cwd });
    try {
      expect((await readiness(server)).environment.build).toBe(
        pointer(join(cwd, '.data', 'expenses'))[0],
      );
      expect(server.logs.some((line) => line.msg === 'build started')).toBe(false);
      expect(server.logs.find((line) => line.msg === 'listening')).toMatchObject({
        dataDir: join(cwd, '.data', 'expenses'),
      });
      expect(existsSync(join(cwd, '.data', 'expenses', 'pglite'))).toBe(true);
      expect(
        server.logs.find((line) => line.msg === 'data folder of an earlier version not used'),
      ).toMatchObject({
        level: 'warn',
        hint: expect.stringContaining(`DATA_DIR=${join(cwd, '.data')}`),
      });
      expect((await byMonth(server.url)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  describe('replicas of two projects on one Postgres', () => {
    let t: TestServer;
    let orders: ServerProcess;
    let admin: string;
    beforeAll(async () => {
      t = await startServer();
      admin = await new Api(t.url).adminToken();
      // Its own folder and queue, as the deployment docs ask; only the database is shared.
      orders = await t.another({
        PROJECT_DIR: BENCH_PROJECT,
        DATA_DIR: temp().path,
        REDIS_PREFIX: uniqueName('drey'),
      });
    });
    afterAll(() => t.close());

    it("never fetch each other's builds from the store", async () => {
      const expensesBuild = (await readiness(t.server)).environment.build;
      const ordersBuild = (await readiness(orders)).environment.build;
      // The orders replica found no build of its own in the store: it built one, it did not fetch.
      expect(ordersBuild).not.toBe(expensesBuild);
      expect(orders.logs.some((line) => line.msg === 'environment fetched')).toBe(false);
      expect(
        orders.logs.find((line) => line.msg === 'the database stores builds of other projects'),
      ).toMatchObject({ serves: 'orders v1', others: ['expenses v1'] });

      const ordersApi = new Api(orders.url);
      expect((await ordersApi.request('POST', `${BENCH_P}/build`, { token: admin })).status).toBe(
        200,
      );
      const newOrders = (await readiness(orders)).environment.build;
      expect(newOrders).not.toBe(ordersBuild);
      const published = await logged(
        orders,
        (line) => line.msg === 'environment published' && line.buildId === newOrders,
      );
      expect(published).toBeDefined();
      // Four polls of the store later, the expenses replica still serves its own build.
      const until = Date.now() + 2000;
      while (Date.now() < until) {
        expect((await readiness(t.server)).environment.build).toBe(expensesBuild);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await byMonth(t.url)).status).toBe(200);

      const api = new Api(t.url);
      expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
      const newExpenses = (await readiness(t.server)).environment.build;
      expect(newExpenses).not.toBe(expensesBuild);
      await logged(
        t.server,
        (line) => line.msg === 'environment published' && line.buildId === newExpenses,
      );
      const untilAgain = Date.now() + 2000;
      while (Date.now() < untilAgain) {
        expect((await readiness(orders)).environment.build).toBe(newOrders);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(
        [...t.server.logs, ...orders.logs].some((line) => line.msg === 'environment fetched'),
      ).toBe(false);
      // One database, two histories: each project lists its own builds only.
      const ids = async (apiOf: Api, path: string) =>
        ((await apiOf.get(path, admin)).body as { id: string }[]).map((run) => run.id);
      const expensesRuns = await ids(api, `${P}/builds`);
      const ordersRuns = await ids(ordersApi, `${BENCH_P}/builds`);
      expect(expensesRuns).toEqual(expect.arrayContaining([expensesBuild, newExpenses]));
      expect(ordersRuns).toEqual(expect.arrayContaining([ordersBuild, newOrders]));
      expect(expensesRuns.filter((id) => ordersRuns.includes(id))).toEqual([]);
    });
  });

  it('has a worker refuse a build of another project queued on the queue it shares', async () => {
    // Only the expenses server runs: whatever it takes from its queue, it takes. The job is queued as a
    // server of the orders project sharing the queue (same Redis and prefix) would, by BullMQ itself, in a
    // process of its own (BullMQ ships as ES modules, which Jest cannot load).
    const t = await startServer();
    try {
      const served = (await readiness(t.server)).environment.build;
      const buildId = randomUUID();
      const script = `
        import { Queue, QueueEvents } from 'bullmq';
        const url = new URL(process.env.Q_URL);
        const connection = { host: url.hostname, port: Number(url.port || 6379) };
        const prefix = process.env.Q_PREFIX;
        const queue = new Queue('builds', { connection, prefix });
        const events = new QueueEvents('builds', { connection, prefix });
        await events.waitUntilReady();
        const job = await queue.add('build', { buildId: process.env.Q_ID, project: 'orders v1' }, {
          jobId: process.env.Q_ID, deduplication: { id: 'build' }, attempts: 1,
        });
        try {
          await job.waitUntilFinished(events, 120000);
          console.log('done');
        } catch (error) {
          console.log('failed: ' + error.message);
        }
        await events.close();
        await queue.close();
      `;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', script],
        {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            Q_URL: REDIS_URL,
            Q_PREFIX: t.env.REDIS_PREFIX,
            Q_ID: buildId,
          },
        },
      );
      expect(stdout.trim()).toBe(
        'failed: a server of expenses v1 took this build of orders v1 from the builds queue they share ' +
          '(the same REDIS_URL and REDIS_PREFIX): give each project its own REDIS_PREFIX',
      );
      expect(
        t.server.logs.find((line) => line.msg === 'build of another project refused'),
      ).toMatchObject({ buildId, project: 'orders v1', serves: 'expenses v1' });
      expect(
        t.server.logs.some((line) => line.msg === 'build started' && line.buildId === buildId),
      ).toBe(false);
      expect((await readiness(t.server)).environment.build).toBe(served);
    } finally {
      await t.close();
    }
  });

  describe('a build that lacks tables of the project served', () => {
    let t: TestServer;
    let projectDir: string;
    beforeAll(async () => {
      // The example with one more seed: the build of the plain example (same name and version) lacks it.
      projectDir = join(temp().path, 'expenses');
      cpSync(EXAMPLE_PROJECT, projectDir, { recursive: true });
      writeFileSync(join(projectDir, 'seeds', 'budgets.csv'), 'category,amount\nFood,100\n');
      t = await startServer({ DATABASE_URL: undefined, PROJECT_DIR: projectDir });
    });
    afterAll(() => t.close());

    it('makes readiness 503 naming what is missing; a restart rebuilds', async () => {
      expect((await readiness(t.server)).status).toBe(200);
      // Another copy of the project, built into the same folder: followed (same project), but short.
      const built = await drey(['build', '--project', EXAMPLE_PROJECT], {
        DATA_DIR: t.env.DATA_DIR,
      });
      expect(built.code).toBe(0);
      const [cliBuild] = pointer(t.env.DATA_DIR);
      const { status, environment } = await readiness(t.server);
      expect(status).toBe(503);
      expect(environment).toMatchObject({ status: 'down', build: cliBuild });
      expect(environment.detail).toContain('lacks tables the project needs: budgets (seed)');
      expect(environment.detail).toContain('POST P/build');
      // What does not need the missing table still answers.
      expect((await byMonth(t.url)).status).toBe(200);

      await t.server.stop();
      const restarted = await t.another();
      expect(
        restarted.logs.find(
          (line) => line.msg === 'the build served lacks tables of the project: rebuilding',
        ),
      ).toMatchObject({ buildId: cliBuild, missing: ['budgets (seed)'] });
      const after = await readiness(restarted);
      expect(after.status).toBe(200);
      expect(after.environment.build).not.toBe(cliBuild);
    });
  });
});
