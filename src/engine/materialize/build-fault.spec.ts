import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Engine } from '@/engine/engine';
import { loadProject } from '@/core/project/project-loader';

/** A port nothing listens on: taken, then freed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function writeProject(dir: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/**
 * Whose fault a failed build is decides what a waiting POST P/build answers: the project's SQL a 400
 * `invalid_project`, a source the build cannot reach a 500 `build_failed` (nothing in the project to fix).
 */
describe('whose fault a failed build is', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'drey-fault-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is the infrastructure's when a source's database does not answer", async () => {
    const port = await closedPort();
    const dir = writeProject(join(root, 'unreachable'), {
      'project.yml': [
        'name: warehouse_demo',
        'major_version: 1',
        'connections:',
        '  - { name: warehouse, kind: postgres, url_env: WAREHOUSE_URL }',
      ].join('\n'),
      'models/pg_expenses.yml': [
        'kind: source',
        'connection: warehouse',
        'table: public.expenses',
      ].join('\n'),
    });
    const engine = new Engine(loadProject(dir), {
      dataDir: join(root, 'unreachable-data'),
      env: { WAREHOUSE_URL: `postgres://postgres@127.0.0.1:${port}/none` },
    });
    await engine.open();
    try {
      await expect(engine.build('b1')).rejects.toMatchObject({
        code: 'build_failed',
        fault: 'infrastructure',
        model: 'pg_expenses',
      });
    } finally {
      await engine.close();
    }
  });

  it("is the project's when its SQL fails", async () => {
    const dir = writeProject(join(root, 'broken'), {
      'project.yml': 'name: broken\nmajor_version: 1\n',
      'models/numbers.yml': 'kind: build\n',
      'models/numbers.sql': 'SELECT * FROM no_such_table',
    });
    const engine = new Engine(loadProject(dir), { dataDir: join(root, 'broken-data') });
    await engine.open();
    try {
      await expect(engine.build('b1')).rejects.toMatchObject({
        code: 'invalid_project',
        fault: 'project',
        model: 'numbers',
      });
    } finally {
      await engine.close();
    }
  });
});
