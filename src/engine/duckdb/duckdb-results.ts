import {
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBMaterializedResult,
  DuckDBResultReader,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  DuckDBValue,
} from '@duckdb/node-api';
import {
  decimalJson,
  integerJson,
  JsonValue,
  QueryResult,
  ResultColumn,
} from '@/engine/sql/query-result';
import type { ColumnType } from '@/core/project/project';

type Convert = (value: DuckDBValue) => JsonValue;

function infinite(value: { isFinite: boolean; toString(): string }): string | undefined {
  if (value.isFinite) return undefined;
  return value.toString().startsWith('-') ? '-infinity' : 'infinity';
}

const asIs: Convert = (value) => value as JsonValue;
const asText: Convert = (value) => String(value);
const asInteger: Convert = (value) => integerJson(value as bigint | number);
// JSON has no NaN or Infinity.
const asFloat: Convert = (value) => (Number.isFinite(value) ? (value as number) : null);
const asDecimal: Convert = (value) => decimalJson((value as DuckDBDecimalValue).toString());
const asDate: Convert = (value) => {
  const date = value as DuckDBDateValue;
  return date.isFinite ? date.toString() : (infinite(date) ?? null);
};
const asTimestamp: Convert = (value) => {
  const timestamp = value as DuckDBTimestampValue;
  return infinite(timestamp) ?? timestamp.toString().replace(' ', 'T');
};
/** Instants in UTC with a Z, whatever time zone the driver formats with. */
const asInstant: Convert = (value) => {
  const instant = value as DuckDBTimestampTZValue;
  return (
    infinite(instant) ?? `${new DuckDBTimestampValue(instant.micros).toString().replace(' ', 'T')}Z`
  );
};

/** How each DuckDB type reaches clients: its schema type and its JSON form. */
function mappingOf(typeId: DuckDBTypeId): { type: ColumnType; convert: Convert } {
  switch (typeId) {
    case DuckDBTypeId.BOOLEAN:
      return { type: 'boolean', convert: asIs };
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return { type: 'integer', convert: asInteger };
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return { type: 'number', convert: asFloat };
    case DuckDBTypeId.DECIMAL:
      return { type: 'decimal', convert: asDecimal };
    case DuckDBTypeId.DATE:
      return { type: 'date', convert: asDate };
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return { type: 'datetime', convert: asTimestamp };
    case DuckDBTypeId.TIMESTAMP_TZ:
      return { type: 'datetime', convert: asInstant };
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_NS:
    case DuckDBTypeId.TIME_TZ:
      return { type: 'time', convert: asText };
    // Text, and what has no schema type of its own (lists, structs, intervals, blobs): DuckDB's text form.
    case DuckDBTypeId.VARCHAR:
    case DuckDBTypeId.ENUM:
    case DuckDBTypeId.UUID:
    case DuckDBTypeId.BLOB:
    case DuckDBTypeId.BIT:
    case DuckDBTypeId.INTERVAL:
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
    case DuckDBTypeId.STRUCT:
    case DuckDBTypeId.MAP:
    case DuckDBTypeId.UNION:
    case DuckDBTypeId.VARIANT:
    case DuckDBTypeId.GEOMETRY:
    case DuckDBTypeId.SQLNULL:
    case DuckDBTypeId.ANY:
    case DuckDBTypeId.INVALID:
    case DuckDBTypeId.STRING_LITERAL:
    case DuckDBTypeId.INTEGER_LITERAL:
      return { type: 'string', convert: asText };
  }
}

/** The schema type clients receive for a DuckDB type. */
export function schemaType(typeId: DuckDBTypeId): ColumnType {
  return mappingOf(typeId).type;
}

/** How one result column reaches clients. */
export interface ColumnMapping {
  column: ResultColumn;
  convert: Convert;
}

/** The columns of a result (a reader, a materialized or a streaming result) as clients see them. */
export function columnMappings(
  source: Pick<
    DuckDBResultReader | DuckDBMaterializedResult,
    'columnCount' | 'columnName' | 'columnTypeId' | 'columnType'
  >,
): ColumnMapping[] {
  const mappings: ColumnMapping[] = [];
  for (let index = 0; index < source.columnCount; index++) {
    const mapping = mappingOf(source.columnTypeId(index));
    mappings.push({
      column: {
        name: source.columnName(index),
        type: mapping.type,
        databaseType: source.columnType(index).toString(),
      },
      convert: mapping.convert,
    });
  }
  return mappings;
}

/** The first `count` rows of column-major DuckDB values as JSON-ready rows. */
export function convertColumns(
  columns: readonly (readonly DuckDBValue[])[],
  count: number,
  mappings: readonly ColumnMapping[],
): JsonValue[][] {
  // Column by column: DuckDB's vectors are columnar, and each column converts with one function.
  const rows: JsonValue[][] = Array.from(
    { length: count },
    () => new Array<JsonValue>(mappings.length),
  );
  mappings.forEach(({ convert }, column) => {
    const values = columns[column];
    for (let row = 0; row < count; row++) {
      const value = values[row];
      rows[row][column] = value === null ? null : convert(value);
    }
  });
  return rows;
}

/** Reads a result into JSON-ready rows, at most `maxRows` of them. */
export async function readResult(
  reader: DuckDBResultReader,
  maxRows: number,
): Promise<QueryResult> {
  await reader.readUntil(maxRows + 1);
  const mappings = columnMappings(reader);
  const count = Math.min(reader.currentRowCount, maxRows);
  return {
    columns: mappings.map((mapping) => mapping.column),
    rows: convertColumns(reader.getColumns(), count, mappings),
    truncated: reader.currentRowCount > maxRows,
  };
}

/**
 * A materialized result's first `maxRows` rows, taken from the chunks it already holds: no call goes to
 * the thread pool. {@link readResult} fetches each chunk, and then the end, with a task of the pool each,
 * and under load every such task waits behind the queries the pool's threads are running.
 */
export function readMaterialized(result: DuckDBMaterializedResult, maxRows: number): QueryResult {
  const mappings = columnMappings(result);
  const columns: (DuckDBValue[] | undefined)[] = [];
  const chunks = result.chunkCount;
  let read = 0;
  for (let index = 0; index < chunks && read <= maxRows; index++) {
    const chunk = result.getChunk(index);
    chunk.appendToColumns(columns);
    read += chunk.rowCount;
  }
  return {
    columns: mappings.map((mapping) => mapping.column),
    rows: convertColumns(columns as DuckDBValue[][], Math.min(read, maxRows), mappings),
    truncated: read > maxRows,
  };
}
