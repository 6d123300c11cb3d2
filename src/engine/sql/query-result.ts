import type { ColumnType } from '@/core/project/project';

export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface ResultColumn {
  name: string;
  /** The schema type clients see. */
  type: ColumnType;
  /** The database's own type name (`DECIMAL(38,2)`), for diagnostics and docs. */
  databaseType: string;
}

/**
 * A query's whole result, already JSON-ready, so that a caller can count it and serve any page of it
 * without running the query again.
 */
export interface QueryResult {
  columns: ResultColumn[];
  rows: JsonValue[][];
  /** True when the query had more rows than the engine's row limit; `rows` holds the first ones. */
  truncated: boolean;
}

/** Rows `offset` to `offset + limit - 1` of a result (fewer at its end). */
export interface RowWindow {
  offset: number;
  limit: number;
}

/** One page of rows as objects keyed by column name. */
export function rowObjects(
  result: Pick<QueryResult, 'columns' | 'rows'>,
  offset = 0,
  limit = result.rows.length,
): Record<string, JsonValue>[] {
  const names = result.columns.map((column) => column.name);
  return result.rows.slice(offset, offset + limit).map((row) => {
    const object: Record<string, JsonValue> = {};
    names.forEach((name, index) => {
      object[name] = row[index];
    });
    return object;
  });
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Whole numbers as JSON numbers while exact; beyond 2^53 as strings, which keep every digit. */
export function integerJson(value: bigint | number): number | string {
  if (typeof value === 'number') return value;
  return value <= SAFE && value >= -SAFE ? Number(value) : value.toString();
}

/** An exact decimal as a JSON number when the number prints back to the same value, else as a string. */
export function decimalJson(text: string): number | string {
  const number = Number(text);
  const normal = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  const canonical = normal.replace(/^(-?)0+(?=\d)/, '$1');
  return Number.isFinite(number) && String(number) === (canonical === '-0' ? '0' : canonical)
    ? number
    : text;
}
