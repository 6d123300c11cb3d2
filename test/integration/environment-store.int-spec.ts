import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as EnvironmentStoreFile from '@/database/tables/environment-store';
import { tempDir } from '../support/services';
import { InProcessApp, fromDist, startApp } from './bootstrap';

/**
 * The store that carries built environments between replicas, on the real Postgres: a round trip, and a
 * fetch that cannot write its file rejects (the replica retries) instead of ending the process: an
 * unhandled write error of a full data disk did, in the fault drill.
 */
describe('EnvironmentStore', () => {
  let t: InProcessApp;
  const dir = tempDir();

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t?.close();
    dir.remove();
  });

  const store = () => {
    const { EnvironmentStore } = fromDist<typeof EnvironmentStoreFile>(
      'database/tables/environment-store',
    );
    return t.app.get(EnvironmentStore);
  };

  it('fetches what was published, and rejects a file it cannot write', async () => {
    const source = join(dir.path, 'source.duckdb');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(source, bytes);
    const stored = await store().publish('00000000-0000-4000-8000-00000000e5e5', source);
    const copy = join(dir.path, 'copy.duckdb');
    await store().fetch(stored, copy);
    expect(readFileSync(copy).equals(bytes)).toBe(true);

    await expect(store().fetch(stored, join(dir.path, 'missing', 'copy.duckdb'))).rejects.toThrow(
      /ENOENT/,
    );
  });
});
