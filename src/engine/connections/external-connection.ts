import type { DuckDBConnection } from '@duckdb/node-api';
import type { QueryLimits } from '@/engine/duckdb/duckdb-query';
import type { QueryResult } from '@/engine/sql/query-result';
import type { BoundValue } from '@/engine/sql/bound-value';
import type { ColumnSpec } from '@/core/project/project';

/**
 * An external database the project reads from. Each kind (Postgres now; MySQL, ClickHouse, ... later) is one
 * class implementing this, registered in connection-registry.ts.
 */
export interface ExternalConnection {
  readonly name: string;

  /**
   * Copies the rows of a query on this connection into a new DuckDB table, typed by the declared columns
   * or else by the source's own types. Returns the number of rows copied. `signal` aborted stops the copy
   * between two batches (the build is being interrupted).
   */
  copyInto(
    target: DuckDBConnection,
    table: string,
    sql: string,
    columns: readonly ColumnSpec[],
    signal?: AbortSignal,
  ): Promise<number>;

  /**
   * Plans one query with bound values without running it (a build's check of a dbview model): the
   * database's refusal is the model's problem.
   */
  plan(sql: string, binds: readonly BoundValue[], limits: QueryLimits): Promise<void>;

  /** Runs one read-only query with bound values, within the time and row limits. */
  query(sql: string, binds: readonly BoundValue[], limits: QueryLimits): Promise<QueryResult>;

  close(): Promise<void>;
}
