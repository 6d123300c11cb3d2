import type { DuckDBConnection } from '@duckdb/node-api';
import { DomainError } from '@/core/errors';
import { isOutOfMemory, queryTooLarge } from '@/engine/duckdb/duckdb-errors';

/**
 * A time limit spent only while DuckDB works: each step of a streamed query (prepare, a chunk fetched) is
 * timed against what is left, and `interrupt()` stops the connection when it runs out; time spent waiting
 * for the reader is not counted. A step stopped by the limit is `query_timeout`, one stopped by the
 * database's memory limit `query_too_large`.
 */
export function timeBudget(
  connection: DuckDBConnection,
  timeoutMs: number,
): <T>(work: () => Promise<T>) => Promise<T> {
  let budget = timeoutMs;
  return async <T>(work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        connection.interrupt();
      },
      Math.max(budget, 1),
    );
    try {
      return await work();
    } catch (error) {
      if (timedOut) {
        throw new DomainError(
          'query_timeout',
          `The query ran longer than ${timeoutMs / 1000} s and was stopped`,
        );
      }
      if (isOutOfMemory(error)) throw queryTooLarge();
      throw error;
    } finally {
      clearTimeout(timer);
      budget -= performance.now() - started;
    }
  };
}
