import { Readable } from 'node:stream';
import { DuckDBConnection, DuckDBDecimalType, DuckDBTypeId, StatementType } from '@duckdb/node-api';
import { DomainError, NotAcceptableError } from '@/core/errors';
import type { CsvFormulas } from '@/core/result-builtins';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { isOutOfMemory, queryTooLarge } from '@/engine/duckdb/duckdb-errors';
import { NotAQueryError } from '@/engine/duckdb/duckdb-query';
import type { ExportSpace } from '@/engine/export/export-space';
import {
  CopyFormat,
  EXTENSIONS,
  ExportColumn,
  ExportKind,
  XLSX_MAX_ROWS,
  XLSX_ROWS_FILE,
  copyStatement,
  csvHeader,
  selectColumns,
  xlsxHeader,
} from '@/engine/export/export-sql';
import { sheetName, xlsxWorkbook } from '@/engine/export/xlsx-writer';
import type { BoundValue } from '@/engine/sql/bound-value';

/** An export written by DuckDB, sent as it is written. */
export interface WrittenExport {
  stream: Readable;
  /** Rows written, once DuckDB has finished. */
  rows?: number;
}

export interface ExportRequest {
  format: CopyFormat;
  /** `x_select`: the columns to write, in order; empty for all. */
  select: readonly string[];
  /** The worksheet's name (xlsx). */
  name: string;
  /** How a CSV export writes its text cells (`x_csv_formulas`). */
  csvFormulas: CsvFormulas;
  timeoutMs: number;
}

/**
 * `rows` after `first`, which goes out with the first of them (or alone once they end without any): a COPY
 * that fails before writing a byte is then still answered as an error, not as a 200 cut short. Destroying
 * the result closes `rows` (its COPY stopped if running).
 */
function after(first: string, rows: Readable): Readable {
  async function* all(): AsyncGenerator<Buffer> {
    let pending: Buffer | undefined = Buffer.from(first, 'utf8');
    try {
      for await (const chunk of rows) {
        yield pending ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
        pending = undefined;
      }
      if (pending) yield pending;
    } finally {
      rows.destroy();
    }
  }
  const output = Readable.from(all(), { objectMode: false });
  // A reader gone before the first chunk: the rows file is closed all the same.
  output.once('close', () => rows.destroy());
  return output;
}

/** The kind of each DuckDB type an export writes as itself; any other is written as its text. */
const KINDS: Partial<Record<DuckDBTypeId, ExportKind>> = {
  [DuckDBTypeId.TINYINT]: 'number',
  [DuckDBTypeId.SMALLINT]: 'number',
  [DuckDBTypeId.INTEGER]: 'number',
  [DuckDBTypeId.BIGINT]: 'number',
  [DuckDBTypeId.HUGEINT]: 'huge',
  [DuckDBTypeId.UTINYINT]: 'number',
  [DuckDBTypeId.USMALLINT]: 'number',
  [DuckDBTypeId.UINTEGER]: 'number',
  [DuckDBTypeId.UBIGINT]: 'number',
  [DuckDBTypeId.UHUGEINT]: 'huge',
  [DuckDBTypeId.DECIMAL]: 'decimal',
  [DuckDBTypeId.FLOAT]: 'float',
  [DuckDBTypeId.DOUBLE]: 'float',
  [DuckDBTypeId.BOOLEAN]: 'boolean',
  [DuckDBTypeId.DATE]: 'date',
  [DuckDBTypeId.TIMESTAMP]: 'timestamp',
  [DuckDBTypeId.TIMESTAMP_S]: 'timestamp',
  [DuckDBTypeId.TIMESTAMP_MS]: 'timestamp',
  [DuckDBTypeId.TIMESTAMP_NS]: 'timestamp',
  [DuckDBTypeId.TIMESTAMP_TZ]: 'instant',
  [DuckDBTypeId.TIME]: 'time',
  [DuckDBTypeId.TIME_NS]: 'time',
};

/** Digits of the integer types whose values may have more than 15 (see {@link ExportColumn.digits}). */
const DIGITS: Partial<Record<DuckDBTypeId, number>> = {
  [DuckDBTypeId.BIGINT]: 19,
  [DuckDBTypeId.UBIGINT]: 20,
  [DuckDBTypeId.HUGEINT]: 39,
  [DuckDBTypeId.UHUGEINT]: 39,
};

/**
 * The columns `sql` yields, without running it. Read through the same subquery the export writes from,
 * so that duplicate names are the subquery's (`a`, `a_1`) on both sides.
 */
export async function queryColumns(
  connection: DuckDBConnection,
  sql: string,
): Promise<ExportColumn[]> {
  const prepared = await connection.prepare(`SELECT * FROM (\n${sql}\n)`);
  try {
    if (prepared.statementType !== StatementType.SELECT) {
      throw new NotAQueryError(`only queries (SELECT) may be exported`);
    }
    const columns: ExportColumn[] = [];
    for (let index = 0; index < prepared.columnCount; index++) {
      const typeId = prepared.columnTypeId(index);
      const column: ExportColumn = {
        name: prepared.columnName(index),
        kind: KINDS[typeId] ?? 'other',
        digits: DIGITS[typeId],
      };
      // The type's details only for a DECIMAL: DuckDB's client cannot describe a type it has not
      // resolved yet (a column of a bound value, `SELECT $1`).
      const type = typeId === DuckDBTypeId.DECIMAL ? prepared.columnType(index) : undefined;
      if (type instanceof DuckDBDecimalType) {
        column.digits = type.width;
        column.scale = type.scale;
      }
      columns.push(column);
    }
    return columns;
  } finally {
    prepared.destroySync();
  }
}

/**
 * Writes a query's rows with DuckDB's own `COPY ... TO` into the export space, and streams the file as it
 * is written ({@link ExportSpace.tail}). Selections stay bound values of the prepared `COPY`. The time
 * limit counts the writing; a COPY stopped by the memory limit is `query_too_large`, and one that outgrows
 * the export space too. `done` settles when DuckDB has finished (the connection is free again then), with
 * the rows written. An xlsx result beyond Excel's rows fails with a 406 naming the formats without that
 * limit: before the first byte when DuckDB is quicker than the client, else by cutting the download short,
 * never as a sheet silently missing rows.
 */
export async function exportDuckdbQuery(
  connection: DuckDBConnection,
  sql: string,
  binds: readonly BoundValue[],
  space: ExportSpace,
  request: ExportRequest,
): Promise<{ stream: Readable; done: Promise<number> }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    connection.interrupt();
  }, request.timeoutMs);
  const failure = (error: unknown): unknown => {
    if (timedOut) {
      return new DomainError(
        'query_timeout',
        `The query ran longer than ${request.timeoutMs / 1000} s and was stopped`,
      );
    }
    return isOutOfMemory(error) ? queryTooLarge() : error;
  };
  try {
    const columns = selectColumns(await queryColumns(connection, sql), request.select);
    const { values, types } = duckdbParameters(binds);
    const tailed = await space.tail(
      EXTENSIONS[request.format],
      async (path) => {
        try {
          const prepared = await connection.prepare(
            copyStatement(sql, columns, request.format, path, request.csvFormulas),
          );
          try {
            if (timedOut) throw new Error('interrupted');
            prepared.bind(values, types);
            const reader = await prepared.runAndReadAll();
            return Number(reader.getRowsJS()[0]?.[0] ?? 0);
          } finally {
            prepared.destroySync();
          }
        } catch (error) {
          throw failure(error);
        }
      },
      () => connection.interrupt(),
      (rows) =>
        request.format === 'xlsx' && rows > XLSX_MAX_ROWS
          ? new NotAcceptableError(
              `An Excel sheet holds at most ${XLSX_MAX_ROWS} rows under its header and this result has more; ` +
                'export it as csv, parquet, arrow or ndjson',
            )
          : undefined,
      request.format === 'xlsx' ? XLSX_ROWS_FILE : undefined,
    );
    const done = tailed.done.finally(() => clearTimeout(timer));
    done.catch(() => undefined);
    const stream =
      request.format === 'xlsx'
        ? xlsxWorkbook(sheetName(request.name), xlsxHeader(columns), tailed.stream)
        : request.format === 'csv' && request.csvFormulas === 'escaped'
          ? after(csvHeader(columns), tailed.stream)
          : tailed.stream;
    return { stream, done };
  } catch (error) {
    clearTimeout(timer);
    throw failure(error);
  }
}
