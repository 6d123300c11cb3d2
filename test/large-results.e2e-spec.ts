import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from './support/api';
import { memoryOf } from './support/observe';
import { REPO_ROOT, TestServer, startServer } from './support/server';

/** A project of one 2,000,000-row table (test/fixtures/large-result), each row a function of its n. */
const PROJECT_DIR = join(REPO_ROOT, 'test', 'fixtures', 'large-result');
const ROWS = 2_000_000;
const MAX_RESULT_ROWS = 100_000;
const P = '/api/service-v0/project/numbers/v1';
const L = '/service-v0/numbers/v1';
const RESULTS = `${P}/datasets/numbers/results`;

function row(n: number) {
  const letter = String.fromCharCode(97 + (n % 26));
  const label = `number ${String(n).padStart(7, '0')} of the large result, ${letter.repeat(60)}`;
  return { n, triple: n * 3, label };
}

function rowsFrom(first: number, count: number) {
  return Array.from({ length: count }, (_, i) => row(first + i));
}

describe('a result larger than MAX_RESULT_ROWS', () => {
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    t = await startServer({ PROJECT_DIR, MAX_RESULT_ROWS: String(MAX_RESULT_ROWS) });
    api = new Api(t.url);
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  it('reports the true row count, and x_offset reaches its last rows', async () => {
    const first = await api.get(RESULTS);
    expect(first.status).toBe(200);
    expect(first.body.total_num_rows).toBe(ROWS);
    expect(first.body.data_details).toEqual({ num_rows: 1000, orientation: 'records' });
    expect(first.body.data).toEqual(rowsFrom(0, 1000));

    const last = await api.get(`${RESULTS}?x_offset=1999990&x_limit=10`);
    expect(last.body.total_num_rows).toBe(ROWS);
    expect(last.body.data).toEqual(rowsFrom(1_999_990, 10));

    // A page that runs past the end holds the rows there are.
    const tail = await api.get(`${RESULTS}?x_offset=1999995&x_limit=50&x_orientation=rows`);
    expect(tail.body.data).toEqual(rowsFrom(1_999_995, 5).map((r) => [r.n, r.triple, r.label]));
    expect(tail.body.data_details.num_rows).toBe(5);
  });

  it('answers an offset at or past the end with no rows and the true total', async () => {
    for (const offset of [ROWS, 5_000_000]) {
      const reply = await api.get(`${RESULTS}?x_offset=${offset}&x_limit=10`);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ total_num_rows: ROWS, data: [] });
      expect(reply.body.data_details.num_rows).toBe(0);
      expect(reply.body.schema.fields.map((f: { name: string }) => f.name)).toEqual([
        'n',
        'triple',
        'label',
      ]);
    }
    const none = await api.get(`${RESULTS}?x_limit=0`);
    expect(none.body).toMatchObject({ total_num_rows: ROWS, data: [] });
  });

  it('refuses an x_limit above MAX_RESULT_ROWS and serves one of exactly that', async () => {
    const over = await api.get(`${RESULTS}?x_limit=${MAX_RESULT_ROWS + 1}`);
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ statusCode: 400, error: 'invalid_request' });
    expect(over.body.message).toContain(String(MAX_RESULT_ROWS));

    const full = await api.get(
      `${RESULTS}?x_offset=1900000&x_limit=${MAX_RESULT_ROWS}&x_orientation=columns&x_select=n`,
    );
    expect(full.status).toBe(200);
    expect(full.body.total_num_rows).toBe(ROWS);
    expect(full.body.data_details.num_rows).toBe(MAX_RESULT_ROWS);
    const numbers = full.body.data.n as number[];
    expect(numbers).toHaveLength(MAX_RESULT_ROWS);
    expect(numbers.every((n, i) => n === 1_900_000 + i)).toBe(true);
  });

  it('pages a result filtered by a selection, on GET and POST alike', async () => {
    const from = 1_000_000;
    const get = await api.get(`${RESULTS}?from_n=${from}&x_offset=999998&x_limit=5`);
    expect(get.body.total_num_rows).toBe(ROWS - from);
    expect(get.body.data).toEqual(rowsFrom(1_999_998, 2));
    const post = await api.request('POST', RESULTS, {
      json: { from_n: from, x_offset: 12_345, x_limit: 3 },
    });
    expect(post.body.total_num_rows).toBe(ROWS - from);
    expect(post.body.data).toEqual(rowsFrom(from + 12_345, 3));
    // A small result is kept whole as before, and paged from memory.
    const small = await api.get(`${RESULTS}?from_n=1999000&x_offset=990`);
    expect(small.body.total_num_rows).toBe(1000);
    expect(small.body.data).toEqual(rowsFrom(1_999_990, 10));
  });

  it('refuses an unknown x_select column with a 400 before reading any page', async () => {
    // Selections of this test alone, so that no earlier request ran or kept these queries.
    const selected = `${RESULTS}?from_n=17&x_offset=500000&x_limit=10`;
    const queries = (kind: string) =>
      t.server.logs.filter(
        (line) => line.msg === 'dataset query' && line.dataset === 'numbers' && line.kind === kind,
      ).length;
    const results = queries('result');
    const pages = queries('page');
    const unknown = await api.get(`${selected}&x_select=n&x_select=nope`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ statusCode: 400, error: 'invalid_request' });
    expect(unknown.body.message).toContain('x_select names an unknown column "nope"');
    // The result's columns and row count were read (one summary); no page was.
    expect(queries('result')).toBe(results + 1);
    expect(queries('page')).toBe(pages);

    const known = await api.get(`${selected}&x_select=n`);
    expect(known.status).toBe(200);
    expect(known.body.data).toEqual(rowsFrom(500_017, 10).map((r) => ({ n: r.n })));
    // The same request with a known column reuses that summary and reads its page.
    expect(queries('result')).toBe(results + 1);
    expect(queries('page')).toBe(pages + 1);
  });

  it('answers the legacy layout every row up to MAX_RESULT_ROWS, and a clear 400 above it', async () => {
    const huge = await api.get(`${L}/dataset/numbers`);
    expect(huge.status).toBe(400);
    expect(huge.body.detail).toContain(`${ROWS} rows`);
    expect(huge.body.detail).toContain(`MAX_RESULT_ROWS, ${MAX_RESULT_ROWS}`);
    // The legacy layout's own words (legacy/datasets.ts): the ways its clients have to read every row.
    expect(huge.body.detail).toContain('page it in the current layout (x_offset, x_limit)');
    expect(huge.body.message).toBe(huge.body.detail);

    const fits = await api.get(`${L}/dataset/numbers?from_n=1950000`);
    expect(fits.status).toBe(200);
    expect(fits.body.data).toHaveLength(50_000);
    expect(fits.body.data[0]).toEqual(row(1_950_000));
    expect(fits.body.data[49_999]).toEqual(row(1_999_999));
  });

  it('streams every row as CSV', async () => {
    // One column, so that two million rows take seconds, not tens of them.
    const response = await fetch(`${t.url}${RESULTS}?x_select=n`, {
      headers: { accept: 'text/csv' },
    });
    expect(response.status).toBe(200);
    let records = 0;
    let expected = 0;
    let text = '';
    let ordered = true;
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      const lines = (text + decoder.decode(chunk, { stream: true })).split('\r\n');
      text = lines.pop() ?? '';
      for (const line of lines) {
        if (records++ === 0) ordered &&= line === 'n';
        else ordered &&= line === String(expected++);
      }
    }
    expect(text).toBe('');
    expect(ordered).toBe(true);
    expect(records).toBe(ROWS + 1);
  });

  it('holds no more than a page in memory while paging to the end', async () => {
    const pid = t.server.child.pid as number;
    // Warm up on windows of their own, so that DuckDB has read the table's blocks it keeps cached.
    await api.get(`${RESULTS}?from_n=1&x_offset=1999000&x_limit=10`);
    await api.get(`${RESULTS}?from_n=1&x_offset=1000&x_limit=10`);
    const before = memoryOf(pid).rssMb;
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    for (const offset of [1_999_000, 1_500_000, 1_000_000, 500_000, 1_999_989]) {
      const page = await api.get(`${RESULTS}?from_n=1&x_offset=${offset}&x_limit=1000`);
      expect(page.body.total_num_rows).toBe(ROWS - 1);
      expect(page.body.data[0]).toEqual(row(offset + 1));
    }
    const { peakMb } = memoryOf(pid);
    // The whole result would take well over 500 MB in the process (2,000,000 rows of ~120 bytes as
    // JavaScript values); a page of 1,000 rows a few hundred kilobytes.
    expect(peakMb - before).toBeLessThan(150);
  });
});
