import { DuckDBInstance } from '@duckdb/node-api';

/** What one DuckDB database may use of the machine (`ENGINE_*` in the configuration). */
export interface EngineLimits {
  /** `memory_limit`, in MB (MiB); a query that needs more fails with an "Out of Memory Error". */
  memoryLimitMb: number;
  /** Threads a query runs on. */
  threads: number;
  /** `max_temp_directory_size`, in MB: what a query may spill to disk beyond memory; 0 spills nothing. */
  tempLimitMb: number;
}

/** For a 2-core machine: the defaults of `ENGINE_MEMORY_LIMIT_MB`, `ENGINE_THREADS`, `ENGINE_TEMP_LIMIT_MB`. */
export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  memoryLimitMb: 1024,
  threads: 2,
  tempLimitMb: 1024,
};

/**
 * The settings every DuckDB database runs with, as `SET` statements for a connection.
 *
 * Set on a connection, not passed to `DuckDBInstance.create`: `max_temp_directory_size` given there is
 * shown by `duckdb_settings()` but not enforced (node-api 1.5.6: with '0B' a sort spilled 939 MB, with
 * '100MB' 857 MB; the same value SET on a connection stops it with "failed to offload data block ...
 * (95.2 MiB/95.3 MiB used)"), and `temp_directory` there fails with "Failed to set config".
 *
 * Without a limit DuckDB takes 80% of the machine's memory (18.8 GiB on a 24 GB machine), keeps what a
 * query took, and spills up to 90% of the free disk next to the database file.
 *
 * The allocator settings make DuckDB give memory back to the system once a query is done, which it does
 * not by default. Measured (node, a read-only database opened with memory_limit 256MiB and threads 2, the
 * four exhaustion queries of test/engine-limits.e2e-spec.ts run one after the other, each stopped by the
 * time limit or the memory limit; resident memory of the process in MB, before, after the last query,
 * then every 0.5 s):
 * - defaults:                                    85 → 376, then 375 373 373 373 373 373
 * - allocator_bulk_deallocation_flush_threshold: 84 → 331, then 331 331 331 331 331 331
 * - allocator_flush_threshold 8MiB:              84 → 380, then 336 101 101 101 101 101
 * - allocator_background_threads:                84 → 332, then 332 252 155 92 92 89
 * - both of the last two (32MiB):                85 → 332, then 283 220 95 95 92 92
 * Closing the database brought each back to 87-90 MB: it is DuckDB's allocator (jemalloc) that keeps the
 * pages, not the buffer pool. A benchmark of 400 aggregations over 2,000,000 rows (4 at a time) took the
 * same time with and without them (210-235 ms a query either way, within the noise of a shared machine).
 */
export function limitStatements(limits: EngineLimits): string[] {
  return [
    `SET memory_limit = '${limits.memoryLimitMb}MiB'`,
    `SET threads = ${limits.threads}`,
    `SET max_temp_directory_size = '${limits.tempLimitMb}MiB'`,
    'SET allocator_background_threads = true',
    "SET allocator_flush_threshold = '32MiB'",
  ];
}

/**
 * Opens a DuckDB database with `options` (given to `DuckDBInstance.create`), sets the limits, then locks
 * its configuration: neither a request's SQL nor a build model's can raise them or undo `options`.
 */
export async function openDuckdb(
  path: string,
  options: Record<string, string>,
  limits: EngineLimits,
): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(path, options);
  try {
    const connection = await instance.connect();
    try {
      for (const statement of limitStatements(limits)) await connection.run(statement);
      await connection.run('SET lock_configuration = true');
    } finally {
      connection.closeSync();
    }
    return instance;
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}
