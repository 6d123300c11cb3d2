import type { JsonValue, QueryResult } from '@/engine/query/query-result';
import { rowObjects } from '@/engine/query/query-result';

/** A value as a cell of text: nulls empty in CSV, `NULL` in a table; objects and lists as JSON. */
function cellText(value: JsonValue, nullText: string): string {
  if (value === null) return nullText;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Columns padded to their widest cell; numbers right-aligned. */
function table(result: Pick<QueryResult, 'columns' | 'rows'>): string[] {
  const header = result.columns.map((column) => column.name);
  const cells = result.rows.map((row) => row.map((value) => cellText(value, 'NULL')));
  const numeric = result.columns.map((column) =>
    ['integer', 'number', 'decimal'].includes(column.type),
  );
  const widths = header.map((name, index) =>
    Math.max(name.length, ...cells.map((row) => row[index].length)),
  );
  const line = (row: string[]) =>
    row
      .map((text, index) =>
        numeric[index] ? text.padStart(widths[index]) : text.padEnd(widths[index]),
      )
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)];
}

/** The rows of a result as lines of text: an aligned table, CSV with a header, or a JSON array of objects. */
export function formatRows(
  result: Pick<QueryResult, 'columns' | 'rows'>,
  format: 'table' | 'csv' | 'json',
): string[] {
  switch (format) {
    case 'table':
      return table(result);
    case 'csv':
      return [
        result.columns.map((column) => csvField(column.name)).join(','),
        ...result.rows.map((row) => row.map((value) => csvField(cellText(value, ''))).join(',')),
      ];
    case 'json':
      return [JSON.stringify(rowObjects(result), null, 2)];
  }
}
