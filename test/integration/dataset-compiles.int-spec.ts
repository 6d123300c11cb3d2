import { join } from 'node:path';
import type * as ModelSqlFile from '@/engine/query/model-sql';
import { REPO_ROOT } from '../support/server';
import { InProcessApp, fromDist, startApp } from './bootstrap';

/** A project of one 2,000,000-row table (test/fixtures/large-result): its result is never kept whole. */
const PROJECT_DIR = join(REPO_ROOT, 'test', 'fixtures', 'large-result');
const RESULTS = '/api/service-v0/project/numbers/v1/datasets/numbers/results';

/**
 * How often one request renders its dataset's template. A result too large to keep whole takes three
 * queries on a cache miss (the first rows, the count, the page asked for); they share one compiled
 * statement, which the service resolves once, so a request compiles once, or not at all when it is cached.
 */
describe('one compile per request', () => {
  let t: InProcessApp;
  /** composeModel renders a model's template and binds the selections: every compile passes through it. */
  let compiles: jest.SpyInstance;

  beforeAll(async () => {
    t = await startApp({ PROJECT_DIR, MAX_RESULT_ROWS: '100000' });
    compiles = jest.spyOn(fromDist<typeof ModelSqlFile>('engine/query/model-sql'), 'composeModel');
  }, 120_000);
  afterAll(async () => {
    compiles?.mockRestore();
    await t?.close();
  });
  beforeEach(() => {
    compiles.mockClear();
  });

  it('compiles once for an uncached large result that runs its first rows, count and page', async () => {
    const reply = await t
      .http()
      .get(RESULTS)
      .query({ from_n: '12345', x_offset: '50000', x_limit: '3', x_orientation: 'rows' });
    expect(reply.status).toBe(200);
    expect(reply.body.total_num_rows).toBe(2_000_000 - 12345);
    expect(reply.body.data.map((row: unknown[]) => row[0])).toEqual([62345, 62346, 62347]);
    expect(compiles).toHaveBeenCalledTimes(1);
    // The selection reached the statement as a bound value, never as SQL text.
    const [{ value: compiled }] = compiles.mock.results as { value: ModelSqlFile.ComposedQuery }[];
    expect(compiled.sql).not.toContain('12345');
    expect(compiled.binds.map((bound) => String(bound.value))).toContain('12345');
  });

  it('compiles once for a new page of a result whose count is cached, and not at all for a kept page', async () => {
    const query = { from_n: '777', x_limit: '2' };
    expect((await t.http().get(RESULTS).query(query)).status).toBe(200);
    compiles.mockClear();
    const next = await t
      .http()
      .get(RESULTS)
      .query({ ...query, x_offset: '2' });
    expect(next.body.data.map((row: { n: number }) => row.n)).toEqual([779, 780]);
    expect(compiles).toHaveBeenCalledTimes(1);
    compiles.mockClear();
    const again = await t
      .http()
      .get(RESULTS)
      .query({ ...query, x_offset: '2' });
    expect(again.body).toEqual(next.body);
    expect(compiles).not.toHaveBeenCalled();
  });

  it('compiles once for a CSV export', async () => {
    const reply = await t
      .http()
      .get(RESULTS)
      .query({ from_n: '1999998' })
      .set('Accept', 'text/csv');
    expect(reply.status).toBe(200);
    expect(reply.text.trim().split('\n')).toHaveLength(3);
    expect(compiles).toHaveBeenCalledTimes(1);
  });
});
