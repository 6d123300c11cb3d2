import { InvalidRequestError } from '@/core/errors';
import type { ResultOptions } from '@/datasets/results/result-options';
import type { JsonValue, QueryResult } from '@/engine/sql/query-result';
import type { ColumnSpec, ColumnType } from '@/core/project/project';

export interface SchemaField {
  name: string;
  type: ColumnType;
  description: string;
  category: 'dimension' | 'measure' | 'misc';
  condition: string;
}

export interface DatasetResult {
  schema: { fields: SchemaField[] };
  total_num_rows: number;
  data_details: { num_rows: number; orientation: string };
  data: Record<string, JsonValue>[] | JsonValue[][] | Record<string, JsonValue[]>;
}

/** Schema fields of a result: the result's own types with the model's metadata where it has some. */
export function schemaFields(
  result: Pick<QueryResult, 'columns'>,
  metadata: ColumnSpec[] = [],
): SchemaField[] {
  const byName = new Map(metadata.map((column) => [column.name, column]));
  return result.columns.map((column) => {
    const meta = byName.get(column.name);
    return {
      name: column.name,
      type: column.type,
      description: meta?.description ?? '',
      category: meta?.category ?? 'misc',
      condition: meta?.condition ?? '',
    };
  });
}

/** Which rows of a whole result a query result holds: from row `offset`, of `total` rows in all. */
export interface HeldRows {
  offset: number;
  total: number;
}

/**
 * The current layout's dataset result from a query result: total before paging, then `x_select`,
 * `x_offset`, `x_limit` and the orientation. Pure, so that a cached result serves any page without a query.
 * `held` says which rows `result` holds when it is not the whole result (a page of a large one).
 */
export function shapeResult(
  result: QueryResult,
  fields: SchemaField[],
  options: ResultOptions,
  held: HeldRows = { offset: 0, total: result.rows.length },
): DatasetResult {
  const names = result.columns.map((column) => column.name);
  let indexes = names.map((_, index) => index);
  if (options.select.length > 0) {
    indexes = options.select.map((name) => {
      const index = names.indexOf(name);
      if (index < 0) throw new InvalidRequestError(`x_select names an unknown column "${name}"`);
      return index;
    });
  }
  const start = Math.max(0, options.offset - held.offset);
  const page = result.rows.slice(
    start,
    Math.max(start, options.offset + options.limit - held.offset),
  );
  const chosen = indexes.map((index) => names[index]);
  let data: DatasetResult['data'];
  switch (options.orientation) {
    case 'records':
      data = page.map((row) =>
        Object.fromEntries(indexes.map((index, i) => [chosen[i], row[index]])),
      );
      break;
    case 'rows':
      data = page.map((row) => indexes.map((index) => row[index]));
      break;
    case 'columns':
      data = Object.fromEntries(
        indexes.map((index, i) => [chosen[i], page.map((row) => row[index])]),
      );
      break;
  }
  return {
    schema: { fields: indexes.map((index) => fields[index]) },
    total_num_rows: held.total,
    data_details: { num_rows: page.length, orientation: options.orientation },
    data,
  };
}

/**
 * Throws the 400 {@link shapeResult} would for an unknown column of `select`, from the result's columns
 * alone: checked before a page of a large result is read, so that such a read runs no query.
 */
export function checkSelect(
  run: { result: QueryResult; fields: SchemaField[] },
  select: string[],
): void {
  const options: ResultOptions = { orientation: 'rows', select, offset: 0, limit: 0 };
  shapeResult({ ...run.result, rows: [] }, run.fields, options, { offset: 0, total: 0 });
}
