import { spawn } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { Dev, drey } from './support/drey-cli';
import { EXAMPLE_PROJECT, LogLine, REPO_ROOT, ServerProcess, baseEnv } from './support/server';
import { createTestDatabase, freePort, tempDir, TestDatabase } from './support/services';

/** The example project, copied to be broken and fixed. */
function projectCopy(dir: string) {
  const project = join(dir, 'project');
  cpSync(EXAMPLE_PROJECT, project, { recursive: true });
  const sql = join(project, 'models', 'expenses_by_month.sql');
  const yml = join(project, 'project.yml');
  const goodSql = readFileSync(sql, 'utf8');
  const goodYml = readFileSync(yml, 'utf8');
  return {
    project,
    /** The runtime model's SQL names a column that does not exist: the files load, the SQL does not plan. */
    breakSql: () => writeFileSync(sql, goodSql.replace('sum(amount)', 'sum(amout)')),
    fixSql: () => writeFileSync(sql, goodSql),
    /** project.yml does not parse: the folder does not load at all. */
    breakManifest: () => writeFileSync(yml, `${goodYml}\nparameters: [unclosed\n`),
    fixManifest: () => writeFileSync(yml, goodYml),
  };
}

const fields = async (api: Api) => {
  const reply = await api.get(`${P}/datasets/expenses_by_month/results`);
  expect(reply.status).toBe(200);
  return (reply.body.schema.fields as { name: string }[]).map((field) => field.name);
};

describe('a start on a project that does not check out', () => {
  const dir = tempDir();
  const files = projectCopy(dir.path);
  let database: TestDatabase;
  let env: Record<string, string>;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = baseEnv(join(dir.path, 'data'), database.url, { PROJECT_DIR: files.project });
    // The last good build, made and kept by the command line.
    const built = await drey(['build'], env);
    expect(built.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database.drop();
    dir.remove();
  });

  it('serves the last good build when the SQL no longer plans, says where and what to do, and steps through its start', async () => {
    files.breakSql();
    server = await ServerProcess.start(env);
    const api = new Api(server.url);
    // The project as it was built is served, its SQL and all.
    expect(await fields(api)).toEqual(['month', 'total_amount']);
    const line = server.logs.find(
      (entry) => entry.msg === 'the project does not check out: serving the last good build',
    );
    expect(line).toMatchObject({ level: 'error', buildId: expect.any(String) });
    expect(JSON.stringify(line?.problems)).toContain('models/expenses_by_month.sql');
    // The build models are those of the build: a rebuild would fail the same way, so none is advised.
    expect(String(line?.hint)).toContain('fix the files named');
    expect(String(line?.hint)).not.toContain('building the project as it is now');
    expect(server.logs.some((entry) => entry.msg === 'build queued')).toBe(false);

    // Each step of the start says what it is doing, in order, with the time since the process started.
    const steps = server.logs
      .filter((entry) => String(entry.msg).startsWith('start-up: '))
      .map((entry) => ({ msg: String(entry.msg), elapsedMs: Number(entry.elapsedMs) }));
    expect(steps.map((step) => step.msg)).toEqual([
      'start-up: loading the application',
      'start-up: opening the database',
      'start-up: database open, its schema current',
      'start-up: opening the build served last',
      'start-up: build opened',
      "start-up: checking the project's SQL on the build served",
      'start-up: modules started',
    ]);
    const times = steps.map((step) => step.elapsedMs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const msgs = server.logs.map((entry: LogLine) => entry.msg);
    expect(msgs.indexOf('starting')).toBeLessThan(
      msgs.indexOf('start-up: loading the application'),
    );
    expect(msgs.indexOf('start-up: modules started')).toBeLessThan(msgs.indexOf('listening'));
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 120_000);

  it('serves the last good build when project.yml does not load either, and builds once it is fixed', async () => {
    files.breakManifest();
    server = await ServerProcess.start(env);
    const api = new Api(server.url);
    expect(await fields(api)).toEqual(['month', 'total_amount']);
    const stderr = server.stderr.join('');
    expect(stderr).toContain('project.yml');
    expect(stderr).toContain('Serving the last good build');
    expect(stderr).not.toContain('npm run drey -- build');
    expect(server.logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'the project folder does not load: serving the last good build',
      }),
    );
    // Fixed, and rebuilt (SIGHUP, as `drey dev` sends): the folder's project is served.
    files.fixManifest();
    files.fixSql();
    const builds = () => server!.logs.filter((entry) => entry.msg === 'build succeeded').length;
    server.child.kill('SIGHUP');
    const deadline = Date.now() + 60_000;
    while (builds() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(builds()).toBe(1);
    expect(await fields(api)).toEqual(['month', 'total_amount']);
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 120_000);

  it('refuses in a clear message, without advice to rebuild, when there is no build to serve', async () => {
    files.breakManifest();
    const fresh = ServerProcess.spawn({ ...env, DATA_DIR: join(dir.path, 'empty-data') });
    expect(await fresh.waitExit()).toBe(78);
    const stderr = fresh.stderr.join('');
    expect(stderr).toContain('project.yml');
    expect(stderr).toContain('Nothing is served: there is no earlier build of this project');
    expect(stderr).not.toMatch(/rebuild/i);
    files.fixManifest();
  }, 60_000);
});

describe('a taken port', () => {
  let holder: Server;
  const dir = tempDir();

  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    dir.remove();
  });

  it('is said at once in one line naming the port and PORT, and the start exits non-zero', async () => {
    const port = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const server = ServerProcess.spawn(
      baseEnv(dir.path, 'postgres://127.0.0.1:1/none', { PORT: String(port) }),
    );
    expect(await server.waitExit()).toBe(1);
    const stderr = server.stderr.join('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`port ${port} on 127.0.0.1 is in use by another process`);
    expect(stderr).toContain('set PORT');
    expect(stderr).not.toContain('EADDRINUSE');
    // Before anything slow: not even the database was opened (its URL here leads nowhere).
    expect(server.logs.map((line) => line.msg)).toEqual(['starting']);
  }, 60_000);
});

describe('npm run dev on a project that does not check out', () => {
  const dir = tempDir();
  const files = projectCopy(dir.path);
  // Every Node process that npm run dev starts writes its script here: a `nest build` would show.
  const scripts = join(dir.path, 'scripts.txt');
  const spy = join(dir.path, 'spy.js');
  let database: TestDatabase;
  let dev: Dev | undefined;

  const runDev = (env: Record<string, string>) =>
    new Dev(
      spawn('npm', ['run', 'dev', '--', '--project', files.project], {
        cwd: REPO_ROOT,
        env: {
          ...env,
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? dir.path,
          NODE_OPTIONS: `--require ${spy}`,
        },
      }),
    );

  beforeAll(async () => {
    writeFileSync(
      spy,
      `require('node:fs').appendFileSync(${JSON.stringify(scripts)}, String(process.argv[1]) + '\\n');`,
    );
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await dev?.stop();
    await database.drop();
    dir.remove();
  }, 30_000);

  it('waits for a fix when nothing was built yet, then serves; keeps the last good build when broken again', async () => {
    const env = baseEnv(join(dir.path, 'data'), database.url, {});
    delete env.PROJECT_DIR;
    files.breakManifest();
    dev = runDev(env);
    await dev.waitFor(() =>
      dev!.stderr.includes('nothing to serve until the project checks out: waiting for a change'),
    );
    await dev.waitFor(() => dev!.stderr.includes('drey dev: watching'));
    expect(dev.child.exitCode).toBeNull();
    files.fixManifest();
    await dev.waitFor(() => dev!.count('build succeeded') === 1 && dev!.count('listening') === 1);
    const api = new Api(String(dev.logs.find((line) => line.msg === 'listening')?.url));
    expect(await fields(api)).toEqual(['month', 'total_amount']);
    expect(await dev.stop()).toBe(0);

    // Started again on a project whose SQL no longer plans: the last good build is served, the problem
    // said, and dev keeps watching; the fix is built and served.
    files.breakSql();
    dev = runDev(env);
    await dev.waitFor(
      () => dev!.count('listening') === 1 && dev!.stderr.includes('drey dev: watching'),
    );
    const again = new Api(String(dev.logs.find((line) => line.msg === 'listening')?.url));
    expect(await fields(again)).toEqual(['month', 'total_amount']);
    expect(dev.count('the project does not check out: serving the last good build')).toBe(1);
    files.fixSql();
    await dev.waitFor(() => dev!.count('build succeeded') === 1);
    expect(await fields(again)).toEqual(['month', 'total_amount']);
    expect(await dev.stop()).toBe(0);
    dev = undefined;

    // No `nest build` when dist/ is current (npm ci and the tests' build made it so): 30-60 s saved.
    const ran = readFileSync(scripts, 'utf8');
    expect(ran).toContain('drey.js');
    expect(ran).not.toContain(join('@nestjs', 'cli'));
  }, 300_000);
});
