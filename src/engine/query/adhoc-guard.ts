import type { DuckDBConnection } from '@duckdb/node-api';
import { DomainError } from '@/core/errors';

/**
 * Table functions ad-hoc SQL may call: series, unnesting, and the catalog of the models (their tables,
 * columns, views, types), which is what an author needs to write a query. Everything else is refused: an
 * allow list, because each DuckDB release adds table functions, and many show the server rather than the
 * data (`duckdb_settings()`, `duckdb_databases()` with its paths, `duckdb_extensions()`, `duckdb_secrets()`,
 * `duckdb_memory()`, `duckdb_temporary_files()`, `duckdb_logs()`, `pragma_database_size()`,
 * `duckdb_external_file_cache()`), or run SQL that this check would not see (`query()`, `query_table()`,
 * `json_execute_serialized_sql()`).
 */
const ALLOWED_TABLE_FUNCTIONS = new Set([
  'range',
  'generate_series',
  'unnest',
  'json_each',
  'json_tree',
  'duckdb_tables',
  'duckdb_columns',
  'duckdb_views',
  'duckdb_schemas',
  'duckdb_types',
  'duckdb_constraints',
  'duckdb_indexes',
  'duckdb_sequences',
  'duckdb_functions',
  'duckdb_keywords',
  'duckdb_dependencies',
  'pragma_table_info',
]);

/** Scalar functions that read the server's settings, environment or session rather than data. */
const REFUSED_FUNCTIONS = new Set([
  'current_setting',
  'getenv',
  'getvariable',
  'current_query',
  'write_log',
]);

/** What a statement calls and reads, from DuckDB's own parse tree. */
interface StatementParts {
  tableFunctions: string[];
  functions: string[];
  tables: { schema: string; name: string }[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function collect(tree: Json, parts: StatementParts): void {
  if (Array.isArray(tree)) {
    for (const item of tree) collect(item, parts);
    return;
  }
  if (tree === null || typeof tree !== 'object') return;
  if (tree.type === 'TABLE_FUNCTION' && isObject(tree.function)) {
    const { function: call, ...rest } = tree;
    parts.tableFunctions.push(text(call.function_name));
    // The call's arguments may hold further calls (a scalar subquery): walk them, not the call twice.
    collect(call.children ?? null, parts);
    collect(rest, parts);
    return;
  }
  if (typeof tree.function_name === 'string')
    parts.functions.push(tree.function_name.toLowerCase());
  if (tree.type === 'BASE_TABLE' && typeof tree.table_name === 'string') {
    parts.tables.push({
      schema: text(tree.schema_name),
      name: tree.table_name.toLowerCase(),
    });
  }
  for (const value of Object.values(tree)) collect(value, parts);
}

/** A name of the tree, lower-cased as DuckDB matches names; '' when absent. */
function text(value: Json | undefined): string {
  return typeof value === 'string' ? value.toLowerCase() : '';
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REFUSAL =
  'query-models reads the models and their catalog (duckdb_tables(), duckdb_columns(), ' +
  'information_schema, DESCRIBE, SHOW TABLES), not the settings or files of the server';

/**
 * Why a parse tree may not run, or undefined. `views` tells whether a table is a view, and whether that
 * view may be read (checked the same way, through its own definition).
 */
async function refusalOf(
  tree: Json,
  view: (table: { schema: string; name: string }) => Promise<string | undefined>,
): Promise<string | undefined> {
  const parts: StatementParts = { tableFunctions: [], functions: [], tables: [] };
  collect(tree, parts);
  const table = parts.tableFunctions.find((name) => !ALLOWED_TABLE_FUNCTIONS.has(name));
  if (table) return `${table}() is not available: ${REFUSAL}`;
  const scalar = parts.functions.find(
    (name) => REFUSED_FUNCTIONS.has(name) || /^(duckdb|pragma)_/.test(name),
  );
  if (scalar) return `${scalar}() is not available: ${REFUSAL}`;
  for (const table of parts.tables) {
    const refusal = await view(table);
    if (refusal) return refusal;
  }
  return undefined;
}

/** DuckDB's parse tree of one SELECT, or why there is none (`error_message`). */
async function parseTree(
  connection: DuckDBConnection,
  sql: string,
): Promise<{ tree?: Json; error?: string }> {
  const prepared = await connection.prepare('SELECT json_serialize_sql($1::VARCHAR)');
  try {
    prepared.bindVarchar(1, sql);
    const reader = await prepared.runAndReadAll();
    const parsed = JSON.parse(String(reader.getRows()[0]?.[0])) as {
      error?: boolean;
      error_message?: string;
      statements?: Json;
    };
    return parsed.error
      ? { error: parsed.error_message ?? 'the statement does not parse' }
      : { tree: parsed.statements ?? null };
  } finally {
    prepared.destroySync();
  }
}

/** `CREATE TEMP VIEW information_schema."tables" AS SELECT ...;` → `SELECT ...`. */
function viewQuery(definition: string): string | undefined {
  const match =
    /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+[\s\S]*?\s+AS\s+([\s\S]*)$/i.exec(
      definition,
    );
  return match?.[1].replace(/;\s*$/, '');
}

/** Verdicts on view definitions, which are the same in every environment of one DuckDB release. */
const viewVerdicts = new Map<string, string | null>();

/**
 * Refuses ad-hoc SQL that would show the server instead of the data, as `invalid_sql` with a message that
 * names no path. The statement is read through DuckDB's own parser (`json_serialize_sql`, which takes only
 * SELECTs: `PRAGMA`, `SET`, `COPY`, `ATTACH`... are refused with it), and so is every view it reads:
 * DuckDB's built-in views include `duckdb_databases` and `pragma_database_list` (paths) and
 * `pg_catalog.pg_settings` (settings), over the same table functions. A name matches a view in any schema
 * when it is not qualified (conservative: a refusal at worst, never a view read unchecked).
 */
export async function checkAdhocSql(connection: DuckDBConnection, sql: string): Promise<void> {
  const { tree, error } = await parseTree(connection, sql);
  if (error !== undefined) {
    throw new DomainError(
      'invalid_sql',
      /only select/i.test(error)
        ? `Only queries (SELECT, WITH, DESCRIBE, SHOW, ...) may run here, not ${firstWord(sql)}`
        : error,
    );
  }
  let views: { schema: string; name: string; sql: string }[] | undefined;
  const seen = new Set<string>();
  const view = async (table: { schema: string; name: string }): Promise<string | undefined> => {
    views ??= await listViews(connection);
    for (const candidate of views) {
      if (candidate.name !== table.name) continue;
      if (table.schema && candidate.schema !== table.schema) continue;
      if (seen.has(candidate.sql)) continue;
      seen.add(candidate.sql);
      let verdict = viewVerdicts.get(candidate.sql);
      if (verdict === undefined) {
        const query = viewQuery(candidate.sql);
        const parsed = query === undefined ? {} : await parseTree(connection, query);
        verdict = parsed.tree
          ? ((await refusalOf(parsed.tree, view)) ?? null)
          : `${candidate.name} is not available: ${REFUSAL}`;
        if (verdict !== null && !verdict.startsWith(candidate.name)) {
          verdict = `${candidate.name} is not available (it reads ${verdict.split(' ')[0]}): ${REFUSAL}`;
        }
        viewVerdicts.set(candidate.sql, verdict);
      }
      if (verdict) return verdict;
    }
    return undefined;
  };
  const refusal = await refusalOf(tree ?? null, view);
  if (refusal) throw new DomainError('invalid_sql', refusal);
}

async function listViews(
  connection: DuckDBConnection,
): Promise<{ schema: string; name: string; sql: string }[]> {
  const reader = await connection.runAndReadAll(
    'SELECT lower(schema_name), lower(view_name), sql FROM duckdb_views()',
  );
  return reader.getRows().map(([schema, name, sql]) => ({
    schema: String(schema),
    name: String(name),
    sql: String(sql),
  }));
}

function firstWord(sql: string): string {
  const body = sql.replace(/^(?:\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, '');
  return /^[A-Za-z]+/.exec(body)?.[0].toUpperCase() ?? 'this statement';
}
