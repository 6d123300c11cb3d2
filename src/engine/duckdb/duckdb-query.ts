import { DuckDBConnection, DuckDBPreparedStatement, StatementType } from '@duckdb/node-api';
import { DomainError } from '@/core/errors';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { isOutOfMemory, queryTooLarge } from '@/engine/duckdb/duckdb-errors';
import { readMaterialized, readResult } from '@/engine/duckdb/duckdb-results';
import type { QueryResult } from '@/engine/sql/query-result';
import type { BoundValue } from '@/engine/sql/bound-value';

export interface QueryLimits {
  timeoutMs: number;
  maxRows: number;
}

/** The statement is not a query (`COPY`, `ATTACH`, `SET`, ...): only SELECTs run per request. */
export class NotAQueryError extends Error {}

/**
 * Runs one statement with bound values, reading at most `maxRows` rows (and whether there were more). The
 * time limit is enforced with `interrupt()`, which DuckDB honours within milliseconds while a statement
 * runs (a count over `range(1e12)`, a recursive CTE without end, a streamed result) but forgets when it
 * comes between two (while one is prepared): so the flag is checked before each statement starts. A
 * statement stopped by the database's memory limit is `query_too_large`.
 *
 * A query is run materialized, in one task of the driver, as a subquery under `LIMIT maxRows + 1`, so
 * that a huge result still stops at the limit: it takes less CPU per query than a streaming result read
 * chunk by chunk (see docs/performance.md, "Figures behind the code", "Materialized queries"). Its rows are
 * then taken from the result's chunks without another task ({@link readMaterialized}). The
 * subquery form renames duplicate column names (`a`, `a_1`); when a result may hold such a renaming, and
 * for statements the wrapper does not take (not a query, or SQL the parser rejects), the statement runs
 * as written, streamed, which also gives the statement's own error.
 */
export async function runDuckdbQuery(
  connection: DuckDBConnection,
  sql: string,
  binds: readonly BoundValue[],
  limits: QueryLimits,
  selectOnly = true,
): Promise<QueryResult> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, limits.timeoutMs);
  try {
    const { values, types } = duckdbParameters(binds);
    const bounded = selectOnly
      ? await prepareOrUndefined(connection, limited(sql, limits))
      : undefined;
    // A limit passed while preparing must not let the statement run again without one.
    if (timedOut) throw new Error('interrupted');
    if (bounded) {
      try {
        bounded.bind(values, types);
        const result = await bounded.run();
        if (!mayHoldRenamedColumns(result.columnNames())) {
          const rows = readMaterialized(result, limits.maxRows);
          // The limit's interrupt may have come as the statement ended, and may still be pending on the
          // connection: it is a timeout, so the connection is closed rather than kept for another query.
          if (timedOut) throw new Error('interrupted');
          return rows;
        }
      } finally {
        bounded.destroySync();
      }
    }
    const prepared = await connection.prepare(sql);
    try {
      if (timedOut) throw new Error('interrupted');
      if (selectOnly && prepared.statementType !== StatementType.SELECT) {
        throw new NotAQueryError(
          `only queries (SELECT) may run here, not ${StatementType[prepared.statementType]}`,
        );
      }
      prepared.bind(values, types);
      const rows = await readResult(await prepared.streamAndRead(), limits.maxRows);
      if (timedOut) throw new Error('interrupted');
      return rows;
    } finally {
      prepared.destroySync();
    }
  } catch (error) {
    if (timedOut) {
      throw new DomainError(
        'query_timeout',
        `The query ran longer than ${limits.timeoutMs / 1000} s and was stopped`,
      );
    }
    if (isOutOfMemory(error)) throw queryTooLarge();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The statement as a subquery with a row limit; on lines of its own, so a trailing comment ends there. */
function limited(sql: string, limits: QueryLimits): string {
  return `SELECT * FROM (\n${sql}\n) LIMIT ${limits.maxRows + 1}`;
}

async function prepareOrUndefined(
  connection: DuckDBConnection,
  sql: string,
): Promise<DuckDBPreparedStatement | undefined> {
  try {
    const prepared = await connection.prepare(sql);
    if (prepared.statementType === StatementType.SELECT) return prepared;
    prepared.destroySync();
  } catch {
    // Not a statement the wrapper takes: it runs as written, which reports its own error.
  }
  return undefined;
}

/** `a` and `a_1` side by side: possibly two columns named `a` that the subquery renamed. */
function mayHoldRenamedColumns(names: readonly string[]): boolean {
  const present = new Set(names);
  return names.some((name) => {
    const match = /^(.*)_\d+$/s.exec(name);
    return match !== null && present.has(match[1]);
  });
}
