import { DuckDBInstance } from '@duckdb/node-api';
import { runDuckdbQuery } from '@/engine/duckdb/duckdb-query';
import { decimalJson } from '@/engine/sql/query-result';

async function query(sql: string, binds: Parameters<typeof runDuckdbQuery>[2] = [], maxRows = 100) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await runDuckdbQuery(connection, sql, binds, { timeoutMs: 5000, maxRows });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('DuckDB results as JSON', () => {
  it('maps each type to its schema type and a JSON-ready value', async () => {
    const result = await query(
      `SELECT true AS b, 42::INTEGER AS i, 9007199254740993::BIGINT AS big, 12::HUGEINT AS huge,
        1.5::DOUBLE AS d, 'nan'::DOUBLE AS nan, 2124.97::DECIMAL(38,2) AS dec,
        12345678901234567.89::DECIMAL(38,2) AS wide, DATE '2024-12-31' AS day,
        TIMESTAMP '2024-12-31 08:30:00.123456' AS ts, TIMESTAMPTZ '2024-12-31 08:30:00+02' AS tz,
        TIME '08:30:00' AS t, 'x' AS s, [1, 2] AS list, NULL::INTEGER AS nothing,
        'infinity'::DATE AS forever`,
    );
    expect(result.columns.map((column) => `${column.name}:${column.type}`)).toEqual([
      'b:boolean',
      'i:integer',
      'big:integer',
      'huge:integer',
      'd:number',
      'nan:number',
      'dec:decimal',
      'wide:decimal',
      'day:date',
      'ts:datetime',
      'tz:datetime',
      't:time',
      's:string',
      'list:string',
      'nothing:integer',
      'forever:date',
    ]);
    expect(result.rows).toEqual([
      [
        true,
        42,
        '9007199254740993',
        12,
        1.5,
        null,
        2124.97,
        '12345678901234567.89',
        '2024-12-31',
        '2024-12-31T08:30:00.123456',
        '2024-12-31T06:30:00Z',
        '08:30:00',
        'x',
        '[1, 2]',
        null,
        'infinity',
      ],
    ]);
  });

  it('binds dates, decimals and texts with their types', async () => {
    const result = await query(
      'SELECT $1 + 1 AS next_day, $2 * 2 AS doubled, $3 = 0.10::DECIMAL(10,2) AS exact, length($4) AS n',
      [
        { type: 'date', value: '2024-02-28' },
        { type: 'decimal', value: '-12.345' },
        { type: 'decimal', value: '0.1' },
        { type: 'text', value: "'; DROP TABLE x; --" },
      ],
    );
    expect(result.rows).toEqual([['2024-02-29', -24.69, true, 19]]);
  });

  it('keeps at most the row limit, and says the result was cut', async () => {
    const result = await query('SELECT * FROM range(10) t(i)', [], 3);
    expect(result).toMatchObject({ rows: [[0], [1], [2]], truncated: true });
  });

  it('reads every chunk of a result that spans several, up to the row limit', async () => {
    // DuckDB hands rows over 2,048 at a time: 5,000 rows are three chunks.
    const whole = await query(
      'SELECT i, i * 2 AS twice FROM range(5000) t(i) ORDER BY i',
      [],
      5000,
    );
    expect(whole.truncated).toBe(false);
    expect(whole.rows).toHaveLength(5000);
    expect(whole.rows[4999]).toEqual([4999, 9998]);
    const cut = await query('SELECT i FROM range(5000) t(i) ORDER BY i', [], 4096);
    expect(cut.truncated).toBe(true);
    expect(cut.rows).toHaveLength(4096);
    expect(cut.rows[4095]).toEqual([4095]);
  });

  it('keeps the order of a sorted result under the row limit', async () => {
    const result = await query(
      'SELECT i FROM range(10) t(i) ORDER BY i DESC -- newest first',
      [],
      4,
    );
    expect(result).toMatchObject({ rows: [[9], [8], [7], [6]], truncated: true });
  });

  it('keeps duplicate column names as the statement writes them', async () => {
    const result = await query('SELECT 1 AS a, 2 AS a, 3 AS a_1');
    expect(result.columns.map((column) => column.name)).toEqual(['a', 'a', 'a_1']);
    expect(result.rows).toEqual([[1, 2, 3]]);
  });

  it.each([
    ["COPY (SELECT 1) TO '/tmp/drey-never.csv'", /only queries \(SELECT\) may run here, not COPY/],
    ['SELEC 1', /syntax error/],
    ['SELECT * FROM no_such_table', /no_such_table/],
  ])("reports the statement's own error for %s", async (sql, message) => {
    await expect(query(sql)).rejects.toThrow(message);
  });

  it('stops a query over its time limit', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const slow = 'SELECT count(*) FROM range(100000000000) a(i) WHERE i % 7 = 3';
      await expect(
        runDuckdbQuery(connection, slow, [], { timeoutMs: 200, maxRows: 10 }),
      ).rejects.toMatchObject({ code: 'query_timeout' });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it.each([
    ['2124.97', 2124.97],
    ['2305.00', 2305],
    ['-0.50', -0.5],
    ['0.00', 0],
    ['007', 7],
    ['9007199254740993', '9007199254740993'],
    ['0.1234567890123456789', '0.1234567890123456789'],
  ])('turns the decimal %s into %p', (text, json) => {
    expect(decimalJson(text)).toBe(json);
  });
});
