import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Engine } from '@/engine/engine';
import { loadProject } from '@/core/project/project-loader';

const FILES: Record<string, string> = {
  'project.yml': 'name: big\nmajor_version: 1\n',
  'models/huge.yml': 'kind: build\n',
  // 1.6 GB of list: past a 64 MB engine.
  'models/huge.sql': 'SELECT list(range) AS l FROM range(200000000)',
};

describe('a build under the engine limits', () => {
  let root: string;
  let engine: Engine;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'drey-build-limits-'));
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(root, 'project', file)), { recursive: true });
      writeFileSync(join(root, 'project', file), text);
    }
    engine = new Engine(loadProject(join(root, 'project')), {
      dataDir: join(root, 'data'),
      limits: { memoryLimitMb: 64, threads: 1, tempLimitMb: 0 },
    });
    await engine.open();
  });
  afterAll(async () => {
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('fails a model past the memory limit, saying which setting to raise', async () => {
    const failure = engine.build('b1');
    // A model that asks more than the engine may use is the project's to change, as a query past the
    // limit is the caller's (400 query_too_large).
    await expect(failure).rejects.toMatchObject({
      code: 'invalid_project',
      fault: 'project',
      model: 'huge',
    });
    await expect(failure).rejects.toThrow(
      /^build model "huge" \(models\/huge\.sql\) failed: it needed more memory than the engine may use; raise ENGINE_MEMORY_LIMIT_MB/,
    );
    expect(engine.ready).toBe(false);
  });
});
