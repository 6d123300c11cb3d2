import type { ColumnType } from '@/core/project/project';

/**
 * The legacy layout's reading of a results request: every row (the shape `whole`: the 0.4 service had no
 * x_* built-ins, so none is read), in the format `Accept` asks, exports as in the current layout.
 */
export function legacyResultWants<Format extends string | undefined>(
  format: Format,
  ifNoneMatch?: string,
  address?: string,
): { format: Format; shape: 'whole'; ifNoneMatch?: string; address?: string } {
  return { format, shape: 'whole', ifNoneMatch, address };
}

/** What the legacy result reads of a query result (engine/sql/query-result.ts's QueryResult). */
export interface LegacyResultRows {
  columns: { name: string }[];
  rows: unknown[][];
}

/** What the legacy result reads of a result's schema (datasets/results/result-shape.ts's SchemaField). */
export interface LegacyResultField {
  name: string;
  type: ColumnType;
  category: string;
}

/** The 0.4 service's column types: fewer than the current layout's. */
const LEGACY_TYPES: Record<ColumnType, string> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  decimal: 'number',
  boolean: 'boolean',
  date: 'datetime',
  datetime: 'datetime',
  time: 'string',
};

/** The legacy layout's dataset result: every row as a record, with `dimensions`. */
export function legacyResult(result: LegacyResultRows, fields: LegacyResultField[]): object {
  const names = result.columns.map((column) => column.name);
  return {
    schema: {
      fields: fields.map((field) => ({ name: field.name, type: LEGACY_TYPES[field.type] })),
      dimensions: fields
        .filter((field) => field.category === 'dimension')
        .map((field) => field.name),
    },
    data: result.rows.map((row) =>
      Object.fromEntries(names.map((name, index) => [name, row[index]])),
    ),
  };
}

/**
 * The legacy layout's words for a whole result past the cap of one response (`ResultTooLargeError`): the
 * ways its client has to read every row, the current layout's paging among them.
 */
export function wholeResultTooLarge(total: number, max: number): string {
  return (
    `The result has ${total} rows, more than one response may hold (MAX_RESULT_ROWS, ${max}): ` +
    'narrow the selections, page it in the current layout (x_offset, x_limit), or ask for ' +
    'text/csv or application/x-ndjson, which stream every row'
  );
}
