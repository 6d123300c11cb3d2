import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Engine } from '@/engine/engine';
import { loadProject } from '@/core/project/project-loader';

const FILES: Record<string, string> = {
  'project.yml': [
    'name: tiny',
    'major_version: 1',
    'datasets:',
    '  - { name: doubled, model: doubled }',
  ].join('\n'),
  'seeds/numbers.csv': 'n\n1\n2\n3\n',
  'models/doubled.yml': 'kind: build\n',
  'models/doubled.sql': "SELECT n * 2 AS n FROM {{ ref('numbers') }} ORDER BY n",
};

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('Engine.freshBuildId', () => {
  let root: string;
  let engine: Engine;
  let other: Engine;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'drey-fresh-'));
    const dir = join(root, 'project');
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    const project = loadProject(dir);
    engine = new Engine(project, { dataDir: join(root, 'data') });
    await engine.open();
    await engine.build('b1');
    // Another process serving the same folder.
    other = new Engine(project, { dataDir: join(root, 'data') });
    await other.open();
  });

  afterEach(async () => {
    await other.close();
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("sees another process's switch from the next turn, and follows it once acquired", async () => {
    expect(other.freshBuildId()).toBe('b1');
    // Asked again within the turn, it answers without a second look at the pointer.
    writeFileSync(join(root, 'data', 'environments', 'current'), 'b0\ntiny v1\n');
    expect(other.freshBuildId()).toBe('b1');
    await nextTurn();
    expect(other.freshBuildId()).toBeUndefined();
    writeFileSync(join(root, 'data', 'environments', 'current'), 'b1\ntiny v1\n');
    (await other.acquireEnvironment()).release();
    await nextTurn();
    expect(other.freshBuildId()).toBe('b1');
    await engine.build('b2');
    // The pointer moved and this process has not followed it: no build a cache may key on.
    expect(other.freshBuildId()).toBeUndefined();
    const lease = await other.acquireEnvironment();
    expect(lease.environment.id).toBe('b2');
    lease.release();
    await nextTurn();
    expect(other.freshBuildId()).toBe('b2');
  });

  it('sees its own switch at once, within the same turn', async () => {
    expect(engine.freshBuildId()).toBe('b1');
    await engine.build('b2');
    expect(engine.freshBuildId()).toBe('b2');
  });
});
