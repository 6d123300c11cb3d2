import { rssMb } from './support/observe';
import { Api, P } from './support/api';
import { TestServer, startServer } from './support/server';

const QUERY_TIMEOUT_MS = 2000;
/** What answering a stopped query may take beyond the time limit. */
const SLACK_MS = 1000;

/**
 * What exhausted the engine before it had limits, each stopped only by the time limit, some not even by it:
 * the process went from 198 MB to 2.42 GB and stayed there.
 */
const EXHAUSTION = [
  'SELECT count(*) FROM range(1000000000000)',
  'WITH RECURSIVE r(n) AS (SELECT range FROM range(1000000) UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
  "SELECT length(string_agg(repeat('x', 1000), ',')) AS n FROM range(100000000)",
  'SELECT list(range) AS l FROM range(2000000000)',
];

/** Introspection that shows the server (settings, paths, files, memory, secrets) rather than the models. */
const REFUSED = [
  'SELECT * FROM duckdb_settings()',
  "SELECT current_setting('temp_directory') AS t",
  "SELECT current_setting('allowed_directories') AS d",
  'SELECT * FROM duckdb_databases()',
  'SELECT path FROM duckdb_databases',
  'PRAGMA database_list',
  'SELECT * FROM pragma_database_list',
  'SELECT * FROM duckdb_extensions()',
  'SELECT * FROM duckdb_temporary_files()',
  'SELECT * FROM duckdb_secrets()',
  'SELECT * FROM duckdb_memory()',
  "SELECT getenv('HOME') AS home",
  'SELECT * FROM pg_catalog.pg_settings',
  "SELECT * FROM query('SELECT * FROM duckdb_settings()')",
  'SELECT e.id, d.path FROM expenses e, LATERAL (SELECT path FROM duckdb_databases()) d',
];

/** A small engine, a short time limit. */
const LIMITS = {
  QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  ENGINE_MEMORY_LIMIT_MB: '256',
  ENGINE_THREADS: '2',
  ENGINE_TEMP_LIMIT_MB: '64',
};

/** query-models as an administrator, with the time it took to answer. */
async function timedQuery(api: Api, token: string, sql: string) {
  const started = Date.now();
  const reply = await api.request('POST', `${P}/query-models`, { token, json: { sql_query: sql } });
  return { ...reply, ms: Date.now() - started };
}

describe('the engine under exhausting and prying admin SQL', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  const query = (sql: string) => timedQuery(api, admin, sql);

  beforeAll(async () => {
    t = await startServer(LIMITS);
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(REFUSED)('refuses %s with 400 invalid_sql, naming no path', async (sql) => {
    const reply = await query(sql);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_sql');
    expect(reply.text).not.toContain('/');
  });

  it('refuses the query-string form alike', async () => {
    const reply = await api.get(
      `${P}/query-models?x_sql_query=${encodeURIComponent("SELECT current_setting('temp_directory')")}`,
      admin,
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_sql');
    expect(reply.text).not.toContain('/');
  });

  it('keeps the server folders out of the engine errors it returns', async () => {
    const dataDir = t.env.DATA_DIR;
    // A file named as a table: DuckDB's refusal names it.
    const reply = await query(`SELECT * FROM '${dataDir}/environments/current'`);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_sql');
    expect(reply.text).not.toContain(dataDir);
    expect(reply.body.message).toContain('<DATA_DIR>/environments/current');
    const other = await query("SELECT * FROM '/etc/passwd'");
    expect(other.status).toBe(400);
    expect(other.text).not.toContain('/etc/passwd');
  });

  it.each([
    ['SELECT table_name FROM duckdb_tables() ORDER BY 1', 'table_name', 'expenses'],
    [
      "SELECT column_name FROM duckdb_columns() WHERE table_name = 'expenses'",
      'column_name',
      'amount',
    ],
    [
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'expenses'",
      'column_name',
      'amount',
    ],
    ['SELECT table_name FROM information_schema.tables', 'table_name', 'expenses'],
    ['DESCRIBE expenses', 'column_name', 'amount'],
    ['SHOW TABLES', 'name', 'expenses'],
  ])('answers the catalog of the models: %s', async (sql, column, value) => {
    const reply = await query(sql);
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((row: Record<string, unknown>) => row[column])).toContain(value);
  });

  it('answers duckdb_views() with the views there are', async () => {
    const reply = await query('SELECT count(*) AS n FROM duckdb_views()');
    expect(reply.status).toBe(200);
    expect(reply.body.data[0].n).toBeGreaterThan(0);
  });

  it.each([
    'SELECT list(range) AS l FROM range(2000000000)',
    "SELECT length(string_agg(repeat('x', 1000), ',')) AS n FROM range(100000000)",
  ])('stops %s at the memory limit with 400 query_too_large', async (sql) => {
    const reply = await query(sql);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('query_too_large');
    expect(reply.body.message).toMatch(/^The query needed more memory than the engine may use/);
    // Nor DuckDB's sizes, which would tell the configured limit.
    expect(reply.body.message).not.toMatch(/MiB|GiB|memory_limit/);
    expect(reply.ms).toBeLessThan(QUERY_TIMEOUT_MS + SLACK_MS);
  });
});

describe('the memory of the process after exhausting admin SQL', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    // A server of its own: the figure before must not count the other tests' queries.
    t = await startServer(LIMITS);
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  const query = (sql: string) => timedQuery(api, admin, sql);

  it('answers each exhausting query within the time limit, then gives the memory back', async () => {
    const pid = t.server.child.pid ?? 0;
    // Warm up what a query-models request touches, so that the figure before counts the service alone.
    for (let i = 0; i < 5; i++) {
      expect(
        (await query('SELECT category, sum(amount) FROM expense_details GROUP BY 1')).status,
      ).toBe(200);
    }
    const before = rssMb(pid);
    const answers: string[] = [];
    for (const sql of EXHAUSTION) {
      const reply = await query(sql);
      answers.push(
        `${reply.status} ${reply.body.error} in ${reply.ms} ms, then ${Math.round(rssMb(pid))} MB`,
      );
      expect(reply.status).toBe(400);
      expect(['query_timeout', 'query_too_large']).toContain(reply.body.error);
      expect(reply.ms).toBeLessThan(QUERY_TIMEOUT_MS + SLACK_MS);
    }
    // DuckDB's allocator gives pages back in the background (docs/performance.md): wait for that, bounded.
    const answered = Date.now();
    const deadline = answered + 10_000;
    let after = rssMb(pid);
    while (after > before * 1.2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      after = rssMb(pid);
    }
    console.log(
      `RSS before ${Math.round(before)} MB; ${answers.join('; ')}; ${Math.round(after)} MB ` +
        `${Date.now() - answered} ms later`,
    );
    expect(after).toBeLessThanOrEqual(before * 1.2);
  });
});
