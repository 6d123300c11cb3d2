import { InvalidRequestError } from '@/core/errors';
import type { CsvFormulas, ExportFormat } from '@/core/result-builtins';
import { escapedCsvSql } from '@/engine/export/csv-cells';
import { XLSX_STYLE, xlsxDecimalStyle } from '@/engine/export/xlsx-styles';
import { quoteIdentifier, quoteString } from '@/engine/sql/sql-text';

/** What an export needs to know of a column's DuckDB type to write it. */
export type ExportKind =
  | 'number'
  | 'decimal'
  | 'float'
  | 'boolean'
  | 'date'
  | 'timestamp'
  | 'instant'
  | 'time'
  | 'huge'
  | 'other';

export interface ExportColumn {
  name: string;
  kind: ExportKind;
  /** Digits a value may have (a decimal's precision, 19 or more for BIGINT and wider), when over 15. */
  digits?: number;
  /** A decimal's scale. */
  scale?: number;
}

/**
 * The digits Excel keeps of a number: it holds a double, and reads and shows at most 15 significant
 * digits of it, so a value of more digits would lose its last ones.
 */
export const XLSX_DIGITS = 15;

/** The formats DuckDB writes itself with `COPY ... TO`: every one but Arrow. */
export type CopyFormat = Exclude<ExportFormat, 'arrow'>;

/** The file extension of each format, for the file written and the download's name. */
export const EXTENSIONS: Record<ExportFormat, string> = {
  csv: 'csv',
  ndjson: 'ndjson',
  parquet: 'parquet',
  arrow: 'arrow',
  xlsx: 'xlsx',
};

/**
 * Excel's last row is 1,048,576; with the header, that many data rows less one. A larger result is refused
 * rather than cut short: the sheet would silently miss rows.
 */
export const XLSX_MAX_ROWS = 1_048_575;

/**
 * The file DuckDB writes an Excel sheet's rows to, inside the folder its `COPY` is given: the statement sets
 * FILE_SIZE_BYTES (see {@link copyStatement}), which makes the target a folder of files `data_<i>.csv`, and
 * sets it past any export space, so there is only the first.
 */
export const XLSX_ROWS_FILE = 'data_0.csv';

/**
 * Rows of a Parquet export's row groups: a quarter of DuckDB's default (122,880). The writer holds a whole
 * row group, encoded and compressed, before it writes it, so smaller groups hold less memory; they cost no
 * time and a few percent of file size (more row groups, each with its dictionaries and statistics). See
 * docs/performance.md, "Figures behind the code", "Parquet row groups".
 */
export const PARQUET_ROW_GROUP_ROWS = 30_720;

/** The columns an export writes: `select` in its order (each must exist), or all of them. */
export function selectColumns(
  columns: readonly ExportColumn[],
  select: readonly string[],
): ExportColumn[] {
  if (select.length === 0) return [...columns];
  return select.map((name) => {
    const column = columns.find((candidate) => candidate.name === name);
    if (!column) throw new InvalidRequestError(`x_select names an unknown column "${name}"`);
    return column;
  });
}

/**
 * Timestamps as the JSON result writes them (`2024-01-02T03:04:05`, instants in UTC with a `Z`): DuckDB's
 * CSV and JSON writers put a space between date and time.
 */
function timestampText(column: ExportColumn): string {
  const name = quoteIdentifier(column.name);
  if (column.kind === 'timestamp') return `replace(CAST(${name} AS VARCHAR), ' ', 'T') AS ${name}`;
  if (column.kind === 'instant') {
    return `replace(CAST(timezone('UTC', ${name}) AS VARCHAR), ' ', 'T') || 'Z' AS ${name}`;
  }
  return name;
}

/** The control characters XML 1.0 forbids (all below U+0020 but tab, line feed and carriage return). */
const FORBIDDEN = Array.from({ length: 32 }, (_, code) => code)
  .filter((code) => code !== 9 && code !== 10 && code !== 13)
  .map((code) => `chr(${code})`)
  .join(' || ');

/**
 * XML text: escaped, without the control characters XML 1.0 forbids. `translate` drops those in one pass
 * where `regexp_replace` took a fifth of the SQL's time (1,000,000 rows, three text columns).
 */
function xmlText(expression: string): string {
  const escaped = [
    ['&', '&amp;'],
    ['<', '&lt;'],
    ['>', '&gt;'],
    ['"', '&quot;'],
    ['\r', '&#13;'],
    ['\n', '&#10;'],
  ].reduce(
    (sql, [from, to]) => `replace(${sql}, ${quoteString(from)}, ${quoteString(to)})`,
    expression,
  );
  return `translate(${escaped}, ${FORBIDDEN}, '')`;
}

/**
 * A number cell of `name` (in the style `style`), or, when the column may hold values of more than
 * {@link XLSX_DIGITS} digits, for such a value an inline text cell of all its digits, which Excel would
 * otherwise round: what Excel itself advises for long numbers (identifiers, amounts in the trillions
 * with cents). `limit` is the magnitude from which a value is written as text.
 */
function numberCell(name: string, style: string, limit: string | undefined): string[] {
  const text = `CAST(${name} AS VARCHAR)`;
  if (limit === undefined) return [`<c${style}><v>`, text, '</v></c>'];
  const fits = `abs(${name}) < ${limit}`;
  return [
    `CASE WHEN ${fits} THEN ${quoteString(`<c${style}><v>`)} ELSE '<c t=''inlineStr''><is><t>' END`,
    text,
    `CASE WHEN ${fits} THEN '</v></c>' ELSE '</t></is></c>' END`,
  ];
}

/** The pieces of a cell after its first: literal text quoted, expressions as they are. */
type CellPieces = [open: string, ...rest: string[]];

/**
 * One cell of a worksheet row (SpreadsheetML, ECMA-376 part 1 §18.3.1.4), as the SQL arguments of the
 * row's `concat`: numbers as numbers (decimals in the style of their scale, see {@link XLSX_STYLES}),
 * booleans as booleans, dates, timestamps and times as Excel serial numbers in the date and time styles,
 * the rest as inline text. A NULL is an empty cell, so the cells after it keep their column. Attributes
 * are single-quoted, which keeps the SQL's string literals short. The pieces are arguments of one `concat`
 * for the whole row rather than `||` per piece: DuckDB then builds each row's string once instead of once
 * per piece (a third less time for the same bytes).
 */
function xlsxCell(column: ExportColumn): string[] {
  const name = quoteIdentifier(column.name);
  /** Pieces of SQL: literal text is marked by being quoted here already. */
  const literal = (text: string) => quoteString(text);
  const wide = (column.digits ?? 0) > XLSX_DIGITS;
  const pieces = ((): CellPieces => {
    switch (column.kind) {
      case 'number':
      case 'huge':
      case 'float': {
        const [open, text, close] = numberCell(
          name,
          '',
          wide ? `1${'0'.repeat(XLSX_DIGITS)}` : undefined,
        );
        return wide ? [open, text, close] : [literal(open), text, literal(close)];
      }
      case 'decimal': {
        const scale = column.scale ?? 0;
        const style = ` s='${xlsxDecimalStyle(scale)}'`;
        // A value of 15 digits at most, counting the scale's: below 10^(15 - scale).
        const limit = wide ? `1${'0'.repeat(Math.max(XLSX_DIGITS - scale, 0))}` : undefined;
        const [open, text, close] = numberCell(name, style, limit);
        return wide ? [open, text, close] : [literal(open), text, literal(close)];
      }
      case 'boolean':
        return [
          literal("<c t='b'><v>"),
          `CASE WHEN ${name} THEN '1' ELSE '0' END`,
          literal('</v></c>'),
        ];
      case 'date':
        return [
          literal(`<c s='${XLSX_STYLE.date}'><v>`),
          `CAST(${name} - DATE '1899-12-30' AS VARCHAR)`,
          literal('</v></c>'),
        ];
      case 'timestamp':
      case 'instant':
        return [
          literal(`<c s='${XLSX_STYLE.timestamp}'><v>`),
          `CAST(epoch_us(${name}) / 86400000000.0 + 25569 AS VARCHAR)`,
          literal('</v></c>'),
        ];
      case 'time':
        // The fraction of a day.
        return [
          literal(`<c s='${XLSX_STYLE.time}'><v>`),
          `CAST(epoch_us(${name}) / 86400000000.0 AS VARCHAR)`,
          literal('</v></c>'),
        ];
      case 'other': {
        const text = `left(CAST(${name} AS VARCHAR), 32767)`;
        // xml:space only where it matters (text beginning or ending with white space, which Excel would
        // trim without it): a fifth of a typical row's bytes less to write and to deflate.
        const space = `CASE WHEN ascii(${text}) > 32 AND ascii(right(${text}, 1)) > 32 THEN '>' ELSE ' xml:space=''preserve''>' END`;
        return [literal("<c t='inlineStr'><is><t"), space, xmlText(text), literal('</t></is></c>')];
      }
    }
  })();
  // A non-finite double has no cell form: empty, like NULL.
  const empty =
    column.kind === 'float' ? `${name} IS NULL OR NOT isfinite(${name})` : `${name} IS NULL`;
  const [open, ...rest] = pieces;
  return [
    `CASE WHEN ${empty} THEN '<c/>' ELSE ${open} END`,
    ...rest.map((piece) => `CASE WHEN ${empty} THEN NULL ELSE ${piece} END`),
  ];
}

/**
 * The header line of an escaped CSV export (RFC 4180: a name quoted only when it holds a comma, a quote or a
 * line break), written before DuckDB's rows: DuckDB's own header would quote every name that FORCE_QUOTE
 * names.
 */
export function csvHeader(columns: readonly ExportColumn[]): string {
  const names = columns.map(({ name }) =>
    /[",\r\n]/.test(name) ? `"${name.replace(/"/g, '""')}"` : name,
  );
  return `${names.join(',')}\r\n`;
}

/**
 * The SELECT list and options of a CSV export. `raw`: the values as stored, DuckDB's header. `escaped` (see
 * engine/export/csv-cells.ts): text cells (every kind but numbers, booleans, dates and timestamps) escaped
 * and always quoted, no header (see {@link csvHeader}).
 */
function csvCopy(columns: readonly ExportColumn[], formulas: CsvFormulas): [string, string] {
  if (formulas === 'raw') {
    return [columns.map(timestampText).join(', '), "HEADER true, NEW_LINE '\r\n'"];
  }
  const text = columns.filter((column) => column.kind === 'other');
  const list = columns.map((column) =>
    column.kind === 'other'
      ? escapedCsvSql(column.name, `CAST(${quoteIdentifier(column.name)} AS VARCHAR)`)
      : timestampText(column),
  );
  const quote =
    text.length > 0 ? `, FORCE_QUOTE (${text.map((c) => quoteIdentifier(c.name)).join(', ')})` : '';
  return [list.join(', '), `HEADER false, NEW_LINE '\r\n'${quote}`];
}

/**
 * A column of a Parquet export. DuckDB's Parquet writer turns HUGEINT and UHUGEINT into DOUBLE, which
 * loses the digits past 2^53 (a SUM of BIGINTs is a HUGEINT): they are written as DECIMAL(38, 0) instead,
 * exact. A value of 39 digits (beyond ±10^38, near the types' limits) fails the export with DuckDB's
 * conversion error rather than being written rounded.
 */
function parquetValue(column: ExportColumn): string {
  const name = quoteIdentifier(column.name);
  return column.kind === 'huge' ? `CAST(${name} AS DECIMAL(38, 0)) AS ${name}` : name;
}

/**
 * A column of an NDJSON export. JSON has no NaN or Infinity, which DuckDB's JSON writer writes as they are
 * (a line no JSON parser reads): a float that is not finite is null, as in a JSON result (duckdb-results.ts).
 */
function ndjsonValue(column: ExportColumn): string {
  if (column.kind !== 'float') return timestampText(column);
  const name = quoteIdentifier(column.name);
  return `CASE WHEN isfinite(${name}) THEN ${name} END AS ${name}`;
}

/** The header row of a worksheet, in XML. */
export function xlsxHeader(columns: readonly ExportColumn[]): string {
  const cells = columns
    .map((column) => {
      const text = column.name
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        // eslint-disable-next-line no-control-regex
        .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F]/g, '');
      return `<c t="inlineStr"><is><t xml:space="preserve">${text}</t></is></c>`;
    })
    .join('');
  return `<row>${cells}</row>`;
}

/**
 * The `COPY` that writes `source`'s rows (the columns `columns`) to `path` in `format`. The source keeps
 * its bound values (`$1`, ...): the statement is prepared and bound like any other.
 * - csv: RFC 4180, CRLF, text cells as `csvFormulas` says (see {@link csvCopy});
 * - ndjson: one JSON object per line, floats that are not finite as null (see {@link ndjsonValue});
 * - parquet: DuckDB's Parquet writer (Snappy), in row groups of {@link PARQUET_ROW_GROUP_ROWS} rows, huge
 *   integers as decimals (see {@link parquetValue});
 * - xlsx: the worksheet's `<row>` elements, one per line, which {@link XlsxWriter} puts inside the
 *   worksheet; the row limit is checked with a LIMIT of one row more.
 */
export function copyStatement(
  source: string,
  columns: readonly ExportColumn[],
  format: CopyFormat,
  path: string,
  csvFormulas: CsvFormulas = 'escaped',
): string {
  const from = `FROM (\n${source}\n)`;
  const target = quoteString(path);
  switch (format) {
    case 'csv': {
      const [list, options] = csvCopy(columns, csvFormulas);
      return `COPY (SELECT ${list} ${from}) TO ${target} (FORMAT csv, ${options})`;
    }
    case 'ndjson':
      return `COPY (SELECT ${columns.map(ndjsonValue).join(', ')} ${from}) TO ${target} (FORMAT json)`;
    case 'parquet':
      return `COPY (SELECT ${columns.map(parquetValue).join(', ')} ${from}) TO ${target} (FORMAT parquet, ROW_GROUP_SIZE ${PARQUET_ROW_GROUP_ROWS})`;
    case 'xlsx': {
      const row = `concat(${["'<row>'", ...columns.flatMap(xlsxCell), "'</row>'"].join(', ')})`;
      // One column, never holding the delimiter (a control character, removed from text) or a line break
      // (escaped): DuckDB writes each row as it is. Without a quote character the writer does not look
      // for one, which halves its time. FILE_SIZE_BYTES, which DuckDB's order-keeping parallel writer does
      // not support, makes it write the rows in order with one thread as they come: that writer held whole
      // row groups of XML that finished out of order (figures: docs/performance.md, "Figures behind the
      // code", "Excel rows through COPY"). 2^50 bytes is more than any export space
      // (ENGINE_EXPORT_LIMIT_MB is at most 10 TiB): one file, XLSX_ROWS_FILE.
      return `COPY (SELECT ${row} AS r ${from} LIMIT ${XLSX_MAX_ROWS + 1}) TO ${target} (FORMAT csv, HEADER false, DELIM '\x01', QUOTE '', ESCAPE '', NEW_LINE '\n', FILE_SIZE_BYTES ${2 ** 50})`;
    }
  }
}
