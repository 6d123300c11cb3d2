/**
 * Decimals as text at their scale, as DuckDB writes them and the CSV export has them (2320.80, where the
 * JSON value is the number 2320.8): for the printers of rows as text (the CLI's table and CSV, the CSV of a
 * dataset on an external connection, MCP's text copy of a page). Framework-free.
 */

/** The scale of a `DECIMAL(p,s)` (DuckDB) or `numeric(p,s)` (Postgres) type; undefined for any other. */
export function decimalScale(databaseType: string | undefined): number | undefined {
  const match = /^(?:DECIMAL|NUMERIC)\(\d+,\s*(\d+)\)$/i.exec(databaseType ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * A decimal at its scale. A number here prints back to the decimal's exact digits (see `decimalJson`), so
 * the zeros are added to its text, never rounded; a string already holds every digit.
 */
export function decimalText(value: number | string, scale: number): string {
  const text = String(value);
  if (typeof value === 'string' || scale === 0 || !Number.isFinite(value)) return text;
  const [whole, fraction = ''] = text.split('.');
  // 1e21 and above print in exponent form: no place for zeros there.
  if (whole.includes('e')) return text;
  return `${whole}.${fraction.padEnd(scale, '0')}`;
}

type DecimalPrinter = (value: number | string) => string;

/** A column's printer of a decimal at its scale; undefined for a column not a decimal of a known scale. */
export function decimalPrinter(column: {
  type: string;
  databaseType?: string;
}): DecimalPrinter | undefined {
  const scale = column.type === 'decimal' ? decimalScale(column.databaseType) : undefined;
  return scale === undefined ? undefined : (value) => decimalText(value, scale);
}

/** Each column's {@link decimalPrinter}. */
export function decimalPrinters(
  columns: readonly { type: string; databaseType?: string }[],
): (DecimalPrinter | undefined)[] {
  return columns.map(decimalPrinter);
}
