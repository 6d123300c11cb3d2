import { DuckDBConnection, DuckDBDataChunk, StatementType } from '@duckdb/node-api';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { timeBudget } from '@/engine/duckdb/time-budget';
import { NotAQueryError } from '@/engine/duckdb/duckdb-query';
import { ColumnMapping, columnMappings } from '@/engine/duckdb/duckdb-results';
import { CHUNKS_PER_COLLECTION, collectNativeChunks } from '@/engine/process/native-memory';
import type { JsonValue, ResultColumn } from '@/engine/sql/query-result';
import type { BoundValue } from '@/engine/sql/bound-value';

/**
 * Rows as DuckDB produced them, one data chunk (up to 2048 rows) at a time. Values are converted to their
 * JSON form only when asked for, one at a time, and `release()` drops the chunk (and the strings the driver
 * decoded from it) as soon as the reader is done with it. Anything a stream keeps while it waits for a
 * slow client survives V8's young-generation collections and moves to the old generation, where a long
 * export would pile up garbage by the hundred megabytes. A batch is valid until released.
 */
export interface RowBatch {
  columns: ResultColumn[];
  rowCount: number;
  value(row: number, column: number): JsonValue;
  release(): void;
}

/** A batch over rows already in memory (an external connection's result). */
export function rowsBatch(columns: ResultColumn[], rows: JsonValue[][]): RowBatch {
  return {
    columns,
    rowCount: rows.length,
    value: (row, column) => rows[row][column],
    release: () => undefined,
  };
}

function chunkBatch(
  columns: ResultColumn[],
  mappings: ColumnMapping[],
  chunk: DuckDBDataChunk,
): RowBatch {
  let vectors = mappings.map((_, index) => chunk.getColumnVector(index));
  return {
    columns,
    rowCount: chunk.rowCount,
    value(row, column) {
      const value = vectors[column].getItem(row);
      return value === null ? null : mappings[column].convert(value);
    },
    release() {
      vectors = [];
    },
  };
}

/**
 * Runs a SELECT and yields its rows chunk by chunk, each fetched only when the consumer asks for it: memory
 * holds one chunk whatever the row count, and a slow reader slows the query down rather than piling rows
 * up. The time limit counts time spent in DuckDB only, not time spent waiting for the reader.
 */
export async function* streamDuckdbQuery(
  connection: DuckDBConnection,
  sql: string,
  binds: readonly BoundValue[],
  timeoutMs: number,
): AsyncGenerator<RowBatch> {
  const timed = timeBudget(connection, timeoutMs);
  const prepared = await timed(() => connection.prepare(sql));
  try {
    if (prepared.statementType !== StatementType.SELECT) {
      throw new NotAQueryError(
        `only queries (SELECT) may run here, not ${StatementType[prepared.statementType]}`,
      );
    }
    const { values, types } = duckdbParameters(binds);
    prepared.bind(values, types);
    const result = await timed(() => prepared.stream());
    const mappings = columnMappings(result);
    const columns = mappings.map((mapping) => mapping.column);
    // The chunk lives only in this function's frame, which ends before the batch is yielded: the
    // generator's own frame, suspended while the client reads, holds the batch alone.
    const next = async (): Promise<RowBatch | undefined> => {
      const chunk = await timed(() => result.fetchChunk());
      return chunk && chunk.rowCount > 0 ? chunkBatch(columns, mappings, chunk) : undefined;
    };
    let chunks = 0;
    for (let batch = await next(); batch; batch = await next()) {
      if (++chunks % CHUNKS_PER_COLLECTION === 0) collectNativeChunks();
      yield batch;
    }
    // A result without rows still has columns (a CSV header).
    if (chunks === 0) yield rowsBatch(columns, []);
  } finally {
    prepared.destroySync();
  }
}
