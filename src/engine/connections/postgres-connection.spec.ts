import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Engine } from '@/engine/engine';
import { rowObjects } from '@/engine/sql/query-result';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import { loadProject } from '@/core/project/project-loader';

const CALLER: CallerView = { username: 'bob', isAdmin: true, fields: {} };

const FILES: Record<string, string> = {
  'project.yml': [
    'name: warehouse_demo',
    'major_version: 1',
    'connections:',
    '  - { name: warehouse, kind: postgres, url_env: WAREHOUSE_URL }',
    'parameters:',
    "  - { name: note, widget: text, label: Note, default: '' }",
    '  - { name: min_amount, widget: number, label: Min, min: 0, max: 1000, increment: 1, default: 0 }',
    'datasets:',
    '  - { name: live, model: live_expenses, parameters: [note, min_amount] }',
    '  - { name: total, model: pg_total }',
  ].join('\n'),
  'models/pg_expenses.yml': [
    'kind: source',
    'connection: warehouse',
    'table: public.expenses',
    'columns:',
    "  - { name: amount, type: 'decimal(10,2)' }",
  ].join('\n'),
  'models/pg_notes.yml': 'kind: source\nconnection: warehouse\n',
  'models/pg_notes.sql': 'SELECT id, note FROM public.expenses WHERE id > 1',
  'models/pg_total.yml': 'kind: build\n',
  'models/pg_total.sql': "SELECT sum(amount) AS total, count(*) AS n FROM {{ ref('pg_expenses') }}",
  'models/live_expenses.yml': 'kind: dbview\nconnection: warehouse\n',
  'models/live_expenses.sql': [
    'SELECT id, amount, note, spent_on, created_at, big, flag',
    "FROM {{ ref('pg_expenses') }}",
    'WHERE note <> {{ params.note }} AND amount >= {{ params.min_amount }}',
    'ORDER BY id',
  ].join('\n'),
};

function writeProject(dir: string): string {
  for (const [file, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

function live(note: string, minAmount = '0'): SelectionValues {
  return {
    note: { widget: 'text', text: note },
    min_amount: { widget: 'number', value: minAmount },
  };
}

const SETUP = `
  CREATE TABLE expenses (
    id int PRIMARY KEY, amount numeric(10,2), note text, spent_on date, created_at timestamptz,
    big int8, flag bool
  );
  INSERT INTO expenses VALUES
    (1, 10.10, 'coffee', '2024-01-02', '2024-01-02 08:30:00+02', 9007199254740993, true),
    (2, 20.25, 'lunch', '2024-02-03', '2024-02-03 12:00:00+00', 5, false),
    (3, 0.05, NULL, NULL, NULL, NULL, NULL);
`;

// PGlite loads its WebAssembly with a dynamic import, which Jest on Node 20 cannot run: it serves from a
// child process instead, printing its port once ready.
const SERVER = `
  const { PGlite } = require('@electric-sql/pglite');
  const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');
  (async () => {
    const db = await PGlite.create();
    await db.exec(process.env.SETUP_SQL);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await server.start();
    process.stdout.write('port ' + server.port + '\\n');
  })();
`;

async function startPglite(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-e', SERVER], {
    cwd: join(__dirname, '..', '..', '..'),
    env: { ...process.env, SETUP_SQL: SETUP },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Reads stdout to the end (not just to the port): a closed pipe would kill the child on its next write.
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /port (\d+)/.exec(output)?.[1];
      if (port) resolve(`postgres://postgres@127.0.0.1:${port}/postgres`);
    });
    child.once('exit', () => reject(new Error(`PGlite did not start: ${output}`)));
  });
  return { child, url };
}

describe('a postgres connection (PGlite)', () => {
  let pglite: { child: ChildProcess; url: string };
  let root: string;
  let engine: Engine;

  beforeAll(async () => {
    pglite = await startPglite();
    root = mkdtempSync(join(tmpdir(), 'drey-pg-'));
    engine = new Engine(loadProject(writeProject(join(root, 'project'))), {
      dataDir: join(root, 'data'),
      env: { WAREHOUSE_URL: pglite.url },
      // PGlite's socket serves one client at a time.
      postgresPoolSize: 1,
    });
    await engine.open();
  });

  afterAll(async () => {
    await engine?.close();
    pglite?.child.kill();
    if (pglite) await once(pglite.child, 'exit');
    rmSync(root, { recursive: true, force: true });
  });

  it('copies sources (a table, a query) into the environment with exact types', async () => {
    const build = await engine.build('pg1');
    expect(build.models.map((model) => `${model.model}:${model.rows}`)).toEqual([
      'pg_expenses:3',
      'pg_notes:2',
      'pg_total:1',
    ]);
    const total = await engine.runDataset(engine.compileDataset('total', {}, CALLER));
    expect(rowObjects(total)).toEqual([{ total: 30.4, n: 3 }]);
    const copied = await engine.runSql(
      'SELECT id, amount, spent_on, created_at, big, flag FROM pg_expenses ORDER BY id',
      {},
      CALLER,
    );
    expect(copied.columns.map((column) => `${column.name}:${column.databaseType}`)).toEqual([
      'id:INTEGER',
      'amount:DECIMAL(10,2)',
      'spent_on:DATE',
      'created_at:TIMESTAMP WITH TIME ZONE',
      'big:BIGINT',
      'flag:BOOLEAN',
    ]);
    expect(copied.rows[0]).toEqual([
      1,
      10.1,
      '2024-01-02',
      '2024-01-02T06:30:00Z',
      '9007199254740993',
      true,
    ]);
    expect(copied.rows[2]).toEqual([3, 0.05, null, null, null, null]);
  });

  it('runs a dbview model on the connection with bound values', async () => {
    const result = await engine.runDataset(
      engine.compileDataset('live', live("'; DROP TABLE expenses; --"), CALLER),
    );
    expect(result.columns.map((column) => `${column.name}:${column.type}`)).toEqual([
      'id:integer',
      'amount:decimal',
      'note:string',
      'spent_on:date',
      'created_at:datetime',
      'big:integer',
      'flag:boolean',
    ]);
    expect(result.rows).toEqual([
      [1, 10.1, 'coffee', '2024-01-02', '2024-01-02T06:30:00Z', '9007199254740993', true],
      [2, 20.25, 'lunch', '2024-02-03', '2024-02-03T12:00:00Z', 5, false],
    ]);
    // The table is still there, and both filters apply.
    const filtered = await engine.runDataset(
      engine.compileDataset('live', live('coffee', '20.25'), CALLER),
    );
    expect(filtered.rows.map((row) => row[0])).toEqual([2]);
  });

  it('counts and pages a dbview model on its connection, the window bound after the selections', async () => {
    // One compiled statement serves the count and every page, as it does a request's.
    const compiled = engine.compileDataset('live', live('x'), CALLER);
    expect(await engine.countDataset(compiled)).toBe(2);
    const page = await engine.pageDataset(compiled, { offset: 1, limit: 1 });
    expect(page.rows.map((row) => row[0])).toEqual([2]);
    const past = await engine.pageDataset(compiled, { offset: 2, limit: 5 });
    expect(past.rows).toEqual([]);
  });

  it('compiles a dbview with the table of its source and placeholders', () => {
    const compiled = engine.compileDataset('live', live('x'), CALLER);
    expect(compiled.target).toEqual({ kind: 'connection', connection: 'warehouse' });
    expect(compiled.sql).toContain('FROM "public"."expenses"\nWHERE note <> $1 AND amount >= $2');
  });

  it('names the missing environment variable of a connection', () => {
    const bare = new Engine(engine.project, { dataDir: join(root, 'bare') });
    expect(bare.missingConnectionVariables()).toEqual(['WAREHOUSE_URL']);
  });
});
