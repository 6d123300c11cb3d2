/** `"name"`: an identifier quoted for DuckDB and Postgres alike. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `'text'`: a string literal, for the few texts the engine itself writes into SQL (file paths, types). */
export function quoteString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
