import { DuckDBInstance } from '@duckdb/node-api';
import { runDuckdbQuery } from '@/engine/duckdb/duckdb-query';
import type { ComposedQuery } from '@/engine/query/model-sql';
import { countQuery, windowQuery } from '@/engine/query/run-queries';

async function run(query: ComposedQuery, maxRows = 1000) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await runDuckdbQuery(connection, query.sql, query.binds, { timeoutMs: 5000, maxRows });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

// A selection bound as $1, a sort and a trailing comment: what a rendered model may look like.
const MODEL: ComposedQuery = {
  target: { kind: 'duckdb' },
  sql: "SELECT i, 'n' || i AS label FROM range(100) t(i) WHERE i >= $1 ORDER BY i DESC -- newest first",
  binds: [{ type: 'integer', value: 10 }],
  parts: [],
};

describe('windowQuery and countQuery', () => {
  it('reads one window of the rows, in the statement’s order, with its binds kept', async () => {
    const page = windowQuery(MODEL, { offset: 85, limit: 10 });
    expect(page.binds).toEqual([
      { type: 'integer', value: 10 },
      { type: 'integer', value: 10 },
      { type: 'integer', value: 85 },
    ]);
    expect(page.sql).not.toContain('85');
    const result = await run(page);
    expect(result.rows).toEqual([
      [14, 'n14'],
      [13, 'n13'],
      [12, 'n12'],
      [11, 'n11'],
      [10, 'n10'],
    ]);
    expect(result.columns.map((column) => column.name)).toEqual(['i', 'label']);
  });

  it('reads no row past the end', async () => {
    expect((await run(windowQuery(MODEL, { offset: 90, limit: 10 }))).rows).toEqual([]);
  });

  it('counts every row, however many the row limit would keep', async () => {
    expect((await run(countQuery(MODEL), 1)).rows).toEqual([[90]]);
    const big = { ...MODEL, sql: 'SELECT i FROM range(3000000) t(i) WHERE i >= $1' };
    expect((await run(countQuery(big), 1)).rows).toEqual([[2999990]]);
  });
});
