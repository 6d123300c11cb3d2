import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { EngineLimits, openDuckdb } from '@/engine/duckdb/duckdb-instance';
import { runDuckdbQuery } from '@/engine/duckdb/duckdb-query';
import { streamDuckdbQuery } from '@/engine/duckdb/duckdb-stream';
import { READ_ONLY_OPTIONS } from '@/engine/environment/environment';

const SMALL: EngineLimits = { memoryLimitMb: 64, threads: 1, tempLimitMb: 0, exportLimitMb: 1 };
/** A list of 200,000,000 numbers: 1.6 GB, far past 64 MB. */
const HUGE = 'SELECT list(range) AS l FROM range(200000000)';
/** A sort of 20,000,000 wide rows: more than 64 MB, which DuckDB would spill to disk if it might. */
const SPILLING =
  "SELECT sum(x) FROM (SELECT range * 7 % 1000003 AS x, repeat('y', 50) AS pad FROM range(20000000) ORDER BY x, pad)";

describe('a DuckDB database under the engine limits', () => {
  let dir: string;
  let instance: DuckDBInstance;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-limits-'));
    const file = join(dir, 'env.duckdb');
    const build = await openDuckdb(file, {}, SMALL);
    const connection = await build.connect();
    await connection.run('CREATE TABLE t AS SELECT range AS n FROM range(1000)');
    await connection.run('CHECKPOINT');
    connection.closeSync();
    build.closeSync();
    instance = await openDuckdb(file, READ_ONLY_OPTIONS, SMALL);
  });
  afterAll(() => {
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = async (): Promise<Record<string, string>> => {
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads', " +
          "'max_temp_directory_size', 'enable_external_access', 'lock_configuration', " +
          "'allocator_background_threads')",
      );
      return Object.fromEntries(
        reader.getRows().map(([name, value]) => [String(name), String(value)] as const),
      );
    } finally {
      connection.closeSync();
    }
  };

  it('runs with the limits and a locked configuration', async () => {
    expect(await settings()).toEqual({
      memory_limit: '64.0 MiB',
      threads: '1',
      max_temp_directory_size: '0 bytes',
      enable_external_access: 'false',
      lock_configuration: 'true',
      allocator_background_threads: 'true',
    });
    const connection = await instance.connect();
    try {
      await expect(connection.run("SET memory_limit = '10GB'")).rejects.toThrow(/locked/);
      await expect(connection.run('SET threads = 8')).rejects.toThrow(/locked/);
    } finally {
      connection.closeSync();
    }
  });

  it.each([
    ['past the memory limit', HUGE],
    ['that would spill to disk', SPILLING],
  ])('stops a query %s with query_too_large, and goes on serving', async (_what, sql) => {
    const connection = await instance.connect();
    try {
      const failure = runDuckdbQuery(connection, sql, [], { timeoutMs: 20000, maxRows: 10 });
      await expect(failure).rejects.toMatchObject({ code: 'query_too_large' });
      const error = (await failure.catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/^The query needed more memory than the engine may use/);
      // DuckDB's own advice (SET memory_limit) is not for API clients, nor its sizes, which tell the limit.
      expect(error.message).not.toMatch(/SET|PRAGMA|https?:|MiB|GiB/);
      const next = await runDuckdbQuery(connection, 'SELECT count(*) FROM t', [], {
        timeoutMs: 5000,
        maxRows: 10,
      });
      expect(next.rows).toEqual([[1000]]);
    } finally {
      connection.closeSync();
    }
  });

  it('stops a streamed query past the memory limit with query_too_large', async () => {
    const connection = await instance.connect();
    try {
      const read = async () => {
        for await (const batch of streamDuckdbQuery(connection, HUGE, [], 20000)) batch.release();
      };
      await expect(read()).rejects.toMatchObject({ code: 'query_too_large' });
    } finally {
      connection.closeSync();
    }
  });
});
