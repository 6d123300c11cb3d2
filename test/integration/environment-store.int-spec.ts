import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as EnvironmentStoreFile from '@/database/environment-store';
import { tempDir } from '../support/services';
import { fromDist, useApp } from './bootstrap';

/**
 * The store that carries built environments between replicas, on the real Postgres: a round trip, and a
 * fetch that cannot write its file rejects (the replica retries) instead of ending the process: an
 * unhandled write error of a full data disk did, in the fault drill.
 */
describe('EnvironmentStore', () => {
  const t = useApp();
  const dir = tempDir();

  afterAll(() => {
    dir.remove();
  });

  const store = () => {
    const { EnvironmentStore } = fromDist<typeof EnvironmentStoreFile>(
      'database/environment-store',
    );
    return t.app.get(EnvironmentStore);
  };

  it('fetches what was published, and rejects a file it cannot write', async () => {
    const source = join(dir.path, 'source.duckdb');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(source, bytes);
    const stored = await store().publish(
      '00000000-0000-4000-8000-00000000e5e5',
      source,
      'files v1',
    );
    const copy = join(dir.path, 'copy.duckdb');
    await store().fetch(stored, copy);
    expect(readFileSync(copy).equals(bytes)).toBe(true);

    await expect(store().fetch(stored, join(dir.path, 'missing', 'copy.duckdb'))).rejects.toThrow(
      /ENOENT/,
    );
  });

  it("keys builds by project: each project's current build and pruning are its own", async () => {
    const source = join(dir.path, 'small.duckdb');
    writeFileSync(source, randomBytes(1024));
    const id = (n: number) => `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
    await store().publish(id(1), source, 'alpha v1');
    await store().publish(id(2), source, 'beta v1');
    await store().publish(id(3), source, 'alpha v2');
    expect((await store().current('alpha v1'))?.buildId).toBe(id(1));
    expect((await store().current('beta v1'))?.buildId).toBe(id(2));
    expect((await store().current('alpha v2'))?.buildId).toBe(id(3));
    expect(await store().current('gamma v1')).toBeNull();
    expect(await store().otherProjects('alpha v1')).toEqual(
      expect.arrayContaining(['alpha v2', 'beta v1']),
    );
    expect(await store().otherProjects('alpha v1')).not.toContain('alpha v1');

    await store().publish(id(4), source, 'alpha v1');
    await store().publish(id(5), source, 'alpha v1');
    // Keeps alpha v1's two newest; beta's and alpha v2's builds are not alpha v1's to prune.
    expect((await store().prune('alpha v1', 2)).sort()).toEqual([id(1)]);
    expect((await store().current('alpha v1'))?.buildId).toBe(id(5));
    expect((await store().current('beta v1'))?.buildId).toBe(id(2));
    expect((await store().current('alpha v2'))?.buildId).toBe(id(3));
  });
});
