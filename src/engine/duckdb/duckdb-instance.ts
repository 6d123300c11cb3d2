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
 * one core wait on each other's batches by spinning and hold batches finished out of order (see
 * docs/performance.md, "Figures behind the code", "DuckDB's threads on one core").
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
 * shown by `duckdb_settings()` but not enforced (node-api 1.5.6: a sort spilled far past it; the same
 * value SET on a connection stops it with "failed to offload data block ..."), and `temp_directory` there
 * fails with "Failed to set config".
 *
 * Without a limit DuckDB takes 80% of the machine's memory, keeps what a query took, and spills up to 90%
 * of the free disk next to the database file.
 *
 * The allocator settings make DuckDB give memory back to the system once a query is done, which it does
 * not by default: closing the database gave it all back, so it is DuckDB's allocator (jemalloc) that
 * keeps the pages, not its buffer pool. Each setting was measured alone and together, and neither slows
 * queries (see docs/performance.md, "Figures behind the code", "DuckDB's allocator settings").
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
