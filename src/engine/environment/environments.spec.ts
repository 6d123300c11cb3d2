import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Engine } from '@/engine/engine';
import { rowObjects } from '@/engine/sql/query-result';
import type { CallerView } from '@/core/parameters/selection-value';
import { loadProject } from '@/core/project/project-loader';

const ANONYMOUS: CallerView = { username: null, isAdmin: false, fields: {} };

const FILES: Record<string, string> = {
  'project.yml': [
    'name: tiny',
    'major_version: 1',
    'datasets:',
    '  - { name: doubled, model: doubled }',
    '  - { name: slow, model: slow }',
  ].join('\n'),
  'seeds/numbers.csv': 'n\n1\n2\n3\n',
  'models/doubled.yml': 'kind: build\n',
  'models/doubled.sql': "SELECT n * 2 AS n FROM {{ ref('numbers') }} ORDER BY n",
  'models/slow.yml': 'kind: runtime\n',
  // Far too much work to finish: only the time limit stops it.
  'models/slow.sql': 'SELECT sum(i) AS s FROM range(1000000000000) AS t(i)',
};

function writeProject(dir: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

function environmentFiles(dataDir: string): string[] {
  return readdirSync(join(dataDir, 'environments')).sort();
}

describe('environments', () => {
  let root: string;
  let dataDir: string;
  let engine: Engine;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'drey-env-'));
    dataDir = join(root, 'data');
    engine = new Engine(loadProject(writeProject(join(root, 'project'), FILES)), {
      dataDir,
      queryTimeoutMs: 200,
    });
    await engine.open();
    await engine.build('b1');
  });

  afterEach(async () => {
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  });

  const doubled = async (target = engine) =>
    (await target.runDataset(target.compileDataset('doubled', {}, ANONYMOUS))).rows.map(
      (row) => row[0],
    );

  it('answers not_ready before the first build', async () => {
    const fresh = new Engine(engine.project, { dataDir: join(root, 'other') });
    expect(await fresh.open()).toBe(false);
    await expect(
      fresh.runDataset(fresh.compileDataset('doubled', {}, ANONYMOUS)),
    ).rejects.toMatchObject({
      code: 'not_ready',
    });
  });

  it('fails a build with the broken model named, and keeps the previous environment serving', async () => {
    const broken = loadProject(
      writeProject(join(root, 'broken'), {
        ...FILES,
        'models/doubled.sql': "SELECT no_such_column FROM {{ ref('numbers') }}",
      }),
    );
    const other = new Engine(broken, { dataDir });
    await other.open();
    await expect(other.build('b2')).rejects.toMatchObject({
      // The project's SQL, not the server: a 400 for a waiting POST P/build.
      code: 'invalid_project',
      fault: 'project',
      model: 'doubled',
      // The file, and the line and column in it (the engine counts from the CREATE line above the SQL).
      message: expect.stringMatching(
        /build model "doubled" \(models\/doubled\.sql, line 1, column 8\) failed: .*no_such_column/,
      ),
    });
    // Each build keeps the project it serves beside it (for a start on a folder that no longer loads).
    expect(environmentFiles(dataDir)).toEqual(['b1.duckdb', 'b1.duckdb.project.json', 'current']);
    expect(await doubled()).toEqual([2, 4, 6]);
    expect(await doubled(other)).toEqual([2, 4, 6]);
    await other.close();
  });

  it('lets a reader finish on the old file during a switch, then deletes the file', async () => {
    const lease = await engine.environments.acquire();
    await engine.build('b2');
    expect(engine.environments.currentId).toBe('b2');
    const connection = await lease.environment.connect();
    const old = await connection.runAndReadAll('SELECT count(*) FROM doubled');
    connection.closeSync();
    expect(Number(old.getRows()[0][0])).toBe(3);
    expect(existsSync(join(dataDir, 'environments', 'b1.duckdb'))).toBe(true);
    lease.release();
    expect(lease.environment.isClosed).toBe(true);
    // The retired build's kept project went with its file.
    expect(environmentFiles(dataDir)).toEqual(['b2.duckdb', 'b2.duckdb.project.json', 'current']);
    expect(await doubled()).toEqual([2, 4, 6]);
  });

  it('switches another engine on the same data folder to the new build', async () => {
    const other = new Engine(engine.project, { dataDir });
    await other.open();
    expect(other.environments.currentId).toBe('b1');
    await engine.build('b2');
    expect(await doubled(other)).toEqual([2, 4, 6]);
    expect(other.environments.currentId).toBe('b2');
    await other.close();
  });

  it("records the project in the pointer and never follows another project's build", async () => {
    expect(readFileSync(join(dataDir, 'environments', 'current'), 'utf8')).toBe('b1\ntiny v1\n');
    const found: unknown[] = [];
    const shop = new Engine(
      loadProject(
        writeProject(join(root, 'shop'), {
          ...FILES,
          'project.yml': FILES['project.yml'].replace('name: tiny', 'name: shop'),
        }),
      ),
      { dataDir },
    );
    // Another project on the same folder does not open tiny's build: it has to build its own.
    expect(await shop.open()).toBe(false);
    expect(shop.environments.foreign).toEqual({ buildId: 'b1', identity: 'tiny v1' });
    await shop.build('s1');
    expect(readFileSync(join(dataDir, 'environments', 'current'), 'utf8')).toBe('s1\nshop v1\n');
    // The engine serving tiny keeps b1, and says once what it did not follow.
    const tiny = new Engine(engine.project, { dataDir, onForeignBuild: (f) => found.push(f) });
    expect(await tiny.open()).toBe(false);
    expect(await doubled()).toEqual([2, 4, 6]);
    expect(engine.environments.currentId).toBe('b1');
    expect(engine.environments.foreign).toEqual({ buildId: 's1', identity: 'shop v1' });
    await tiny.open();
    expect(found).toEqual([{ buildId: 's1', identity: 'shop v1' }]);
    // A sweep keeps the other project's build the pointer names.
    expect(engine.environments.sweep()).toEqual([]);
    // A new major version of tiny is another API: not followed either.
    const tinyV2 = new Engine({ ...engine.project, majorVersion: 2 }, { dataDir });
    await engine.build('b2');
    expect(await tinyV2.open()).toBe(false);
    expect(tinyV2.environments.foreign).toEqual({ buildId: 'b2', identity: 'tiny v1' });
    expect(await doubled(shop)).toEqual([2, 4, 6]);
    expect(shop.environments.currentId).toBe('s1');
    await Promise.all([shop.close(), tiny.close(), tinyV2.close()]);
  });

  it('does not follow a pointer of an earlier version, which names no project', async () => {
    writeFileSync(join(dataDir, 'environments', 'current'), 'b1\n');
    const later = new Engine(engine.project, { dataDir });
    expect(await later.open()).toBe(false);
    expect(later.environments.foreign).toEqual({ buildId: 'b1', identity: undefined });
    await later.close();
  });

  it('lists the tables the project needs that the build served lacks', async () => {
    expect(await engine.missingTables()).toEqual([]);
    const more = loadProject(
      writeProject(join(root, 'more'), {
        ...FILES,
        'seeds/letters.csv': 'l\na\n',
        'models/upper.yml': 'kind: build\n',
        'models/upper.sql': "SELECT upper(l) AS l FROM {{ ref('letters') }}",
      }),
    );
    // Same name and version: a later edit of the same project follows the build, and finds it short.
    const later = new Engine(more, { dataDir });
    expect(await later.open()).toBe(true);
    expect(await later.missingTables()).toEqual(['letters (seed)', 'upper (build)']);
    await later.build('b2');
    expect(await later.missingTables()).toEqual([]);
    await later.close();
  });

  it('interrupts a runtime query over its time limit', async () => {
    const started = Date.now();
    await expect(
      engine.runDataset(engine.compileDataset('slow', {}, ANONYMOUS)),
    ).rejects.toMatchObject({
      code: 'query_timeout',
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await doubled()).toEqual([2, 4, 6]);
  });

  it('keeps the connection of a finished query for the next, never one that failed', async () => {
    await engine.environments.use(async (environment) => {
      const idle = environment.idleConnections;
      expect(await doubled()).toEqual([2, 4, 6]);
      expect(environment.idleConnections).toBe(idle + 1);
      // The same connection again, not a second one.
      expect(await doubled()).toEqual([2, 4, 6]);
      expect(environment.idleConnections).toBe(idle + 1);
      await expect(
        engine.runDataset(engine.compileDataset('slow', {}, ANONYMOUS), environment),
      ).rejects.toMatchObject({ code: 'query_timeout' });
      // The interrupted query's connection was closed; the one it took is gone from the idle ones.
      expect(environment.idleConnections).toBe(idle);
      // A truncated result may hold its query open: not kept either.
      const truncated = await engine.runDataset(
        engine.compileDataset('doubled', {}, ANONYMOUS),
        environment,
        2,
      );
      expect(truncated.truncated).toBe(true);
      expect(environment.idleConnections).toBe(idle);
    });
  });

  it.each([
    ["COPY doubled TO '/tmp/drey-leak.csv'", /Permission|read-only|Invalid Input/i],
    ["ATTACH '/tmp/drey-other.duckdb' AS other", /Permission|Invalid Input|disabled/i],
    ['INSTALL httpfs', /Permission|Invalid Input|disabled/i],
    ["SELECT * FROM read_csv('/etc/passwd')", /Permission|disabled/i],
    ['CREATE TABLE x AS SELECT 1', /read-only|Invalid Input/i],
    ['SET enable_external_access = true', /lock|Invalid Input|Permission/i],
  ])('has the runtime connection itself refuse %s', async (sql, reason) => {
    await engine.environments.use(async (environment) => {
      const connection = await environment.connect();
      try {
        await expect(connection.run(sql)).rejects.toThrow(reason);
      } finally {
        connection.closeSync();
      }
    });
  });

  it('refuses a build id that is not a plain file name', async () => {
    await expect(engine.build('../escape')).rejects.toThrow(/build id/);
  });

  it('runs built queries on the current environment', async () => {
    expect(await engine.queryBuilt("SELECT max(n) AS top FROM {{ ref('doubled') }}")).toEqual([
      { top: 6 },
    ]);
    const rows = rowObjects(
      await engine.runSql('SELECT sum(n) AS total FROM doubled', {}, ANONYMOUS),
    );
    expect(rows).toEqual([{ total: 12 }]);
  });
});
