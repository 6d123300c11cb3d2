import type { CsvFormulas } from '@/core/result-builtins';
import { escapedCsvText, isTextColumn } from '@/engine/export/csv-cells';
import { decimalPrinter } from '@/engine/sql/decimal-text';
import type { JsonValue, QueryResult, ResultColumn } from '@/engine/sql/query-result';

/** A value as a cell of text: nulls empty in CSV, `NULL` in a table; objects and lists as JSON. */
function cellText(value: JsonValue, nullText: string): string {
  if (value === null) return nullText;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A column as the formats below read it: its database type, when known, says a decimal's scale. */
type Column = Pick<ResultColumn, 'name' | 'type'> & Partial<Pick<ResultColumn, 'databaseType'>>;

/**
 * A float as a person reads it: a DOUBLE to 15 significant digits (7.6, not 7.6000000000000005: the
 * digits past them come from the binary fraction, and are what Excel and psql leave out too), a FLOAT to
 * the fewest digits that read back as the same single-precision value (0.1, not 0.10000000149011612).
 */
export function floatText(value: number, databaseType: string | undefined): string {
  if (databaseType === 'FLOAT') {
    for (let digits = 1; digits < 9; digits++) {
      const shorter = Number(value.toPrecision(digits));
      if (Math.fround(shorter) === value) return String(shorter);
    }
    return String(value);
  }
  return String(Number(value.toPrecision(15)));
}

/**
 * Each column's formatter of its values for a person (`table`: decimals at their scale, floats rounded) or
 * for CSV (decimals at their scale, as the service's CSV export writes them; floats whole, every digit
 * that reads them back).
 */
export function cellFormatters(
  columns: readonly Column[],
  purpose: 'table' | 'csv',
): ((value: JsonValue) => JsonValue)[] {
  return columns.map((column) => {
    const decimal = decimalPrinter(column);
    if (decimal) {
      return (value) =>
        typeof value === 'number' || typeof value === 'string' ? decimal(value) : value;
    }
    if (column.type === 'number' && purpose === 'table') {
      return (value) => (typeof value === 'number' ? floatText(value, column.databaseType) : value);
    }
    return (value) => value;
  });
}

/** Columns padded to their widest cell; numbers right-aligned, decimals and floats as a person reads them. */
export function tableLines(result: {
  columns: readonly Column[];
  rows: readonly (readonly JsonValue[])[];
}): string[] {
  const header = result.columns.map((column) => column.name);
  const formats = cellFormatters(result.columns, 'table');
  const cells = result.rows.map((row) =>
    row.map((value, index) => cellText(formats[index](value), 'NULL')),
  );
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

/** The header line of a CSV export: the project's column names, never escaped (engine/export/csv-cells.ts). */
export function csvHeader(columns: readonly ResultColumn[]): string {
  return columns.map((column) => csvField(column.name)).join(',');
}

/**
 * The columns whose cells a CSV export escapes (quoted, a `'` before a formula: engine/export/csv-cells.ts),
 * by position; none when `raw` asks for the values as stored.
 */
export function csvEscapes(columns: readonly ResultColumn[], formulas: CsvFormulas): boolean[] {
  return columns.map((column) => formulas === 'escaped' && isTextColumn(column.type));
}

/** One row of a CSV export; nulls are empty fields; the text cells `escape` marks escaped. */
export function csvLine(values: readonly JsonValue[], escape: readonly boolean[]): string {
  return values
    .map((value, index) =>
      escape[index] && value !== null
        ? escapedCsvText(cellText(value, ''))
        : csvField(cellText(value, '')),
    )
    .join(',');
}

/** One row of a JSON export: an object keyed by column name, on one line. */
export function jsonRow(columns: readonly ResultColumn[], values: readonly JsonValue[]): string {
  const object: Record<string, JsonValue> = {};
  columns.forEach((column, index) => {
    object[column.name] = values[index];
  });
  return JSON.stringify(object);
}

/**
 * A JSON array written row by row, one object per line: the comma after a row is known only once the
 * next one comes, so the last row seen is held back until then.
 */
export class JsonArrayWriter {
  private held: string | undefined;

  /** The lines ready to print after adding `row`. */
  add(row: string): string[] {
    const ready = this.held === undefined ? ['['] : [`  ${this.held},`];
    this.held = row;
    return ready;
  }

  /** The last lines: the held row and the closing bracket, or `[]` for no row at all. */
  end(): string[] {
    return this.held === undefined ? ['[]'] : [`  ${this.held}`, ']'];
  }
}

/**
 * A whole, small result as lines of text (`users list`): an aligned table, CSV with a header, or a JSON
 * array with one object per line, as `run` prints them row by row.
 */
export function formatRows(
  result: Pick<QueryResult, 'columns' | 'rows'>,
  format: 'table' | 'csv' | 'json',
): string[] {
  switch (format) {
    case 'table':
      return tableLines(result);
    case 'csv': {
      // Always escaped: user names and fields may come from an identity provider (docs/sso.md).
      const escape = csvEscapes(result.columns, 'escaped');
      return [csvHeader(result.columns), ...result.rows.map((row) => csvLine(row, escape))];
    }
    case 'json': {
      const writer = new JsonArrayWriter();
      const lines = result.rows.flatMap((row) => writer.add(jsonRow(result.columns, row)));
      return [...lines, ...writer.end()];
    }
  }
}
