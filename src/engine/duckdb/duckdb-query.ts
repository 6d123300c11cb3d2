import { DuckDBConnection, StatementType } from '@duckdb/node-api';
import { DomainError } from '@/common/errors';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { readResult } from '@/engine/duckdb/duckdb-results';
import type { QueryResult } from '@/engine/query/query-result';
import type { BoundValue } from '@/engine/templating/bound-value';

export interface QueryLimits {
  timeoutMs: number;
  maxRows: number;
}

/** The statement is not a query (`COPY`, `ATTACH`, `SET`, ...): only SELECTs run per request. */
export class NotAQueryError extends Error {}

/**
 * Runs one statement with bound values. The time limit is enforced with `interrupt()`, which DuckDB honours
 * within milliseconds; the result is read as a stream, so a huge result stops at the row limit.
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
    const prepared = await connection.prepare(sql);
    try {
      if (selectOnly && prepared.statementType !== StatementType.SELECT) {
        throw new NotAQueryError(
          `only queries (SELECT) may run here, not ${StatementType[prepared.statementType]}`,
        );
      }
      const { values, types } = duckdbParameters(binds);
      prepared.bind(values, types);
      return await readResult(await prepared.streamAndRead(), limits.maxRows);
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
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
