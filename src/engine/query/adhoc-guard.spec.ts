import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_ENGINE_LIMITS, openDuckdb } from '@/engine/duckdb/duckdb-instance';
import { READ_ONLY_OPTIONS } from '@/engine/environment/environment';
import { checkAdhocSql } from '@/engine/query/adhoc-guard';

/** What reads the server rather than the models: settings, paths, files, memory, secrets, logs. */
const REFUSED = [
  'SELECT * FROM duckdb_settings()',
  "SELECT current_setting('temp_directory')",
  "SELECT current_setting('allowed_directories')",
  'SELECT * FROM duckdb_databases()',
  'SELECT path FROM duckdb_databases',
  'PRAGMA database_list',
  'SELECT * FROM pragma_database_list',
  'SUMMARIZE pragma_database_list',
  'SELECT * FROM duckdb_extensions()',
  'SELECT * FROM duckdb_temporary_files()',
  'SELECT * FROM duckdb_secrets()',
  'SELECT * FROM duckdb_memory()',
  "SELECT getenv('HOME')",
  "SELECT getvariable('x')",
  'SELECT * FROM pg_catalog.pg_settings',
  'SELECT * FROM pg_settings',
  'SELECT * FROM pragma_database_size()',
  'SELECT * FROM duckdb_logs',
  "SELECT * FROM query('SELECT * FROM duckdb_settings()')",
  "SELECT * FROM query_table('duckdb_settings')",
  // Hidden in a subquery, a CTE, a lateral join, a qualified or upper-case name.
  'SELECT (SELECT max(value) FROM duckdb_settings()) AS v',
  'WITH s AS (SELECT * FROM duckdb_databases()) SELECT * FROM s',
  'SELECT * FROM expenses, LATERAL (SELECT path FROM duckdb_databases()) AS d',
  'SELECT * FROM system.main.DUCKDB_DATABASES()',
  "SELECT upper(CURRENT_SETTING('threads'))",
  "SET memory_limit = '10GB'",
  "COPY expenses TO '/tmp/x.csv'",
];

/** What an author needs: the models, their columns and views. */
const ALLOWED = [
  'SELECT count(*) FROM expenses',
  'SELECT table_name FROM duckdb_tables()',
  'SELECT * FROM duckdb_columns()',
  'SELECT * FROM duckdb_views()',
  'SELECT * FROM duckdb_tables',
  'SELECT table_name, column_name FROM information_schema.columns',
  'SELECT * FROM information_schema.tables',
  'DESCRIBE expenses',
  'SHOW TABLES',
  'SUMMARIZE expenses',
  'SELECT * FROM range(3)',
  'SELECT unnest([1, 2])',
];

describe('checkAdhocSql', () => {
  let dir: string;
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-guard-'));
    const file = join(dir, 'env.duckdb');
    const build = await openDuckdb(file, {}, DEFAULT_ENGINE_LIMITS);
    const writer = await build.connect();
    await writer.run(
      'CREATE TABLE expenses AS SELECT range AS id, range * 1.5 AS amount FROM range(10)',
    );
    await writer.run('CHECKPOINT');
    writer.closeSync();
    build.closeSync();
    instance = await openDuckdb(file, READ_ONLY_OPTIONS, DEFAULT_ENGINE_LIMITS);
    connection = await instance.connect();
  });
  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(REFUSED)('refuses %s as invalid_sql, naming no path', async (sql) => {
    const failure = checkAdhocSql(connection, sql);
    await expect(failure).rejects.toMatchObject({ code: 'invalid_sql' });
    const error = (await failure.catch((e: unknown) => e)) as Error;
    expect(error.message).not.toContain('/');
  });

  it.each(ALLOWED)('lets %s through', async (sql) => {
    await expect(checkAdhocSql(connection, sql)).resolves.toBeUndefined();
    // And DuckDB runs it.
    await connection.runAndReadAll(sql);
  });

  it('says which function is refused, and what is available instead', async () => {
    await expect(checkAdhocSql(connection, 'SELECT * FROM duckdb_settings()')).rejects.toThrow(
      /^duckdb_settings\(\) is not available: query-models reads the models and their catalog/,
    );
    await expect(checkAdhocSql(connection, 'SELECT * FROM pragma_database_list')).rejects.toThrow(
      /^pragma_database_list is not available \(it reads duckdb_databases\(\)\)/,
    );
    await expect(checkAdhocSql(connection, 'PRAGMA database_list')).rejects.toThrow(
      /^Only queries \(SELECT, WITH, DESCRIBE, SHOW, \.\.\.\) may run here, not PRAGMA/,
    );
  });
});
