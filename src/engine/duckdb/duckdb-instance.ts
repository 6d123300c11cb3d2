import { availableParallelism } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteString } from '@/engine/sql/sql-text';

/** What one DuckDB database may use of the machine (`ENGINE_*` in the configuration). */
export interface EngineLimits {
  /** `memory_limit`, in MB (MiB); a query that needs more fails with an "Out of Memory Error". */
  memoryLimitMb: number;
  /** Threads a query runs on. */
  threads: number;
  /** `max_temp_directory_size`, in MB: what a query may spill to disk beyond memory; 0 spills nothing. */
  tempLimitMb: number;
  /** Disk, in MB, that exports being written and sent may take together (see ExportSpace). */
  exportLimitMb: number;
}

/**
 * Threads by default: 2, or 1 when the process may run on one CPU only (its affinity, as `taskset` or a
 * pinned container sets it). DuckDB counts the machine's cores, not those it may use, and two threads on
 * one core wait on each other's batches by spinning and hold batches finished out of order. Pinned to one
 * core, 1,000,000 orders (in process, CPU seconds and peak memory, 1 thread against 2): `COPY` to CSV
 * 0.5 s both, 98 MB against 200 MB; to NDJSON 0.7 s against 0.85 s, 106 MB against 350 MB; the Excel
 * export 2.3 s against 2.5 to 3.4 s.
 */
export const DEFAULT_THREADS = Math.min(2, availableParallelism());

/** For a 2-core machine: the defaults of `ENGINE_MEMORY_LIMIT_MB`, `ENGINE_THREADS`, `ENGINE_TEMP_LIMIT_MB`,
 * `ENGINE_EXPORT_LIMIT_MB`. */
export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  memoryLimitMb: 1024,
  threads: DEFAULT_THREADS,
  tempLimitMb: 1024,
  exportLimitMb: 2048,
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
 * not by default: closing the database gave it all back, so it is DuckDB's allocator (jemalloc) that
 * keeps the pages, not its buffer pool. Measured on the server, resident memory of its process in MB
 * before the four exhausting queries of test/engine-limits.e2e-spec.ts, right after the last of them,
 * and at the end of the wait (`npx jest --selectProjects e2e --runInBand --testPathPatterns
 * test/engine-limits.e2e-spec.ts -t 'memory of the process'` prints them; 2 cores, limit 256 MB):
 * - without the two allocator settings: 204 → 575, still 575 after 10 s
 * - with them:                          205 → 443, 215 after 1.8 s; 210 → 462, 206 after 1.0 s
 * - with them and the default limits (1024 MB, a 5 s time limit): 207 → 1205, 215 after 2.0 s
 * Each setting alone, in a bare node process (read-only database, limit 256 MiB, the same four queries;
 * before → after the last, then every 0.5 s): defaults 85 → 376, 375 373 373 373 373 373;
 * allocator_flush_threshold 8MiB 84 → 380, 336 101 101 101 101 101; allocator_background_threads 84 →
 * 332, 332 252 155 92 92 89; both (32MiB) 85 → 332, 283 220 95 95 92 92;
 * allocator_bulk_deallocation_flush_threshold 8MiB 84 → 331, 331 331 331 331 331 331. 400 aggregations
 * over 2,000,000 rows (4 at a time) took 210-235 ms each with or without them, within the noise.
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
 * Shuts a database off from files and the network except `dir`, where its `COPY ... TO` writes exports.
 * In this order: once external access is off, `allowed_directories` can no longer be changed (node-api
 * 1.5.6; given to `DuckDBInstance.create` they fail with "Failed to set config"). `read_csv('/etc/passwd')`,
 * `ATTACH` and a `COPY` outside `dir` are then refused with a Permission Error (duckdb-instance.spec.ts).
 */
export function exportOnlyStatements(dir: string): string[] {
  return [`SET allowed_directories = [${quoteString(dir)}]`, 'SET enable_external_access = false'];
}

/**
 * Opens a DuckDB database with `options` (given to `DuckDBInstance.create`), shuts it off from files but
 * `exportDir` when given ({@link exportOnlyStatements}), sets the limits, then locks its configuration:
 * neither a request's SQL nor a build model's can raise them or undo `options`.
 */
export async function openDuckdb(
  path: string,
  options: Record<string, string>,
  limits: EngineLimits,
  exportDir?: string,
): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(path, options);
  try {
    const connection = await instance.connect();
    try {
      if (exportDir !== undefined) {
        for (const statement of exportOnlyStatements(exportDir)) await connection.run(statement);
      }
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
