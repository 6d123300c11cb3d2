import type { ColumnType } from '@/core/project/project';
import { quoteIdentifier, quoteString } from '@/engine/sql/sql-text';

/**
 * How a CSV export keeps a spreadsheet from running its text as formulas (OWASP, "CSV Injection"; ASVS 5.0
 * 1.2.10), for `x_csv_formulas=escaped` (the default) and `drey run --format csv`:
 * - a text cell that begins with `=`, `+`, `-`, `@`, a tab, a carriage return or NUL, or with spaces or line
 *   feeds and then one of those (a spreadsheet that trims on import would find the formula), is written
 *   with a `'` before it, which a spreadsheet takes for text, not a formula (OWASP's advice);
 * - every text cell is quoted, embedded quotes doubled (RFC 4180), so that a `;` or a tab inside a value
 *   cannot start a new cell, with a formula, in a spreadsheet whose separator it is.
 * Numbers, booleans, dates and timestamps are never text here: `-5` in a numeric column is written as it is.
 * Column names (the header) are the project's own and keep RFC 4180's minimal quoting.
 */

/** Whether a column of this type is written as text (and so escaped); every other type is a value. */
export function isTextColumn(type: ColumnType): boolean {
  return type === 'string' || type === 'time';
}

/**
 * A cell that a spreadsheet would read as a formula: RE2 (DuckDB) and JavaScript read it alike. The leading
 * class is spaces and line feeds only: a tab or a carriage return is itself a trigger.
 */
const FORMULA = '^[ \\n]*[-=+@\\t\\r\\x00]';
const FORMULA_RE = new RegExp(FORMULA);

/**
 * The SQL's first test, before {@link FORMULA} is tried: whether a cell begins with a code point up to the
 * space (NUL, tab, line feed, carriage return, space), with `+` to `-` or with `=` to `@`, by comparing
 * the text with one-character strings. DuckDB keeps a string's first bytes inline and compares them
 * without a call per cell, where `ascii()` was one. A few cells that begin with `,`, `>` or `?` pass it,
 * and the pattern then says no. For the cost, see docs/performance.md (CSV exports and formulas).
 */
function mayBeFormulaSql(expression: string): string {
  return `(${expression} < '!' OR (${expression} >= '+' AND ${expression} < '.') OR (${expression} >= '=' AND ${expression} < 'A'))`;
}

/** Whether a spreadsheet would run this text as a formula. */
export function isFormula(text: string): boolean {
  return FORMULA_RE.test(text);
}

/** A text cell as `escaped` writes it: quoted, embedded quotes doubled, a `'` before a formula. */
export function escapedCsvText(text: string): string {
  return `"${isFormula(text) ? "'" : ''}${text.replace(/"/g, '""')}"`;
}

/**
 * The SQL of a text column's cell as `escaped` writes it, named as the column: the value with a `'` before
 * it when it is a formula; NULL stays NULL (an empty field). The quoting is the COPY's (FORCE_QUOTE).
 * `expression` is the column's text (a VARCHAR, or another type cast to one).
 */
export function escapedCsvSql(name: string, expression: string = quoteIdentifier(name)): string {
  const first = mayBeFormulaSql(expression);
  const formula = `regexp_matches(${expression}, ${quoteString(FORMULA)})`;
  return `CASE WHEN ${first} AND ${formula} THEN '''' || ${expression} ELSE ${expression} END AS ${quoteIdentifier(name)}`;
}
