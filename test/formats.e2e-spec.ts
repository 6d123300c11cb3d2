import { MONTHLY } from './support/figures';
import { Api, L, P } from './support/api';
import { TestServer, startServer } from './support/server';

/**
 * The monthly totals as the CSV export writes them: a header, then one line per month, CRLF; the totals are
 * DECIMAL(…, 2), which DuckDB's CSV writer writes at their scale (`3248.50`, as ../shared/data/README.md);
 * the month is text, quoted as every text cell is (docs/api.md, "CSV and spreadsheets").
 */
const MONTHLY_CSV = [
  'month,total_amount',
  ...MONTHLY.map(([month, total]) => `"${month}",${total.toFixed(2)}`),
]
  .map((line) => `${line}\r\n`)
  .join('');

describe('the format of a dataset result (decisions.md, "Results": Accept with q-values, x_format, 406)', () => {
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  const results = `${P}/datasets/expenses_by_month/results`;
  const legacy = `${L}/dataset/expenses-by-month`;

  it('weighs the quality values of Accept, in both layouts', async () => {
    for (const path of [results, legacy]) {
      const csv = await api.get(path, undefined, {
        accept: 'application/json;q=0.5, text/csv',
      });
      expect({ path, status: csv.status, type: csv.headers.get('content-type') }).toEqual({
        path,
        status: 200,
        type: 'text/csv; charset=utf-8',
      });
      expect(csv.text).toBe(MONTHLY_CSV);
      // An export asked for by Accept is a download too, as before.
      expect(csv.headers.get('content-disposition')).toBe(
        'attachment; filename="expenses_by_month.csv"',
      );
      const json = await api.get(path, undefined, { accept: 'text/csv;q=0.5, */*;q=0.9' });
      expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(json.headers.get('content-disposition')).toBeNull();
      // What a browser sends when it follows a link: the ordinary JSON result.
      const browser = await api.get(path, undefined, {
        accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      });
      expect(browser.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it('takes x_format over Accept, as a download named after the dataset, on GET and POST', async () => {
    const csv = await api.get(`${results}?x_format=csv`, undefined, { accept: 'application/json' });
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(MONTHLY_CSV);
    expect(csv.headers.get('content-disposition')).toBe(
      'attachment; filename="expenses_by_month.csv"',
    );

    const json = await api.get(`${results}?x_format=json&x_limit=2`, undefined, {
      accept: 'text/csv',
    });
    expect(json.status).toBe(200);
    expect(json.body.data.map((row: { month: string }) => row.month)).toEqual([
      MONTHLY[0][0],
      MONTHLY[1][0],
    ]);
    expect(json.headers.get('content-disposition')).toBe(
      'attachment; filename="expenses_by_month.json"',
    );

    // Read as text: the tests' JSON reader would take the x-ndjson body for one JSON document.
    const ndjson = await fetch(`${t.url}${results}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x_format: 'ndjson' }),
    });
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line) as object)).toEqual(
      MONTHLY.map(([month, total_amount]) => ({ month, total_amount })),
    );

    const legacyCsv = await api.get(`${legacy}?x_format=csv`);
    expect(legacyCsv.status).toBe(200);
    expect(legacyCsv.text).toBe(MONTHLY_CSV);
  });

  it('answers 406 not_acceptable, listing what it serves, for an Accept or x_format it cannot serve', async () => {
    const cases: [string, Record<string, string>][] = [
      [results, { accept: 'application/xml' }],
      [`${results}?x_format=xml`, {}],
      [`${results}?x_format=xml`, { accept: 'text/csv' }],
      [results, { accept: 'application/json;q=0' }],
    ];
    for (const [path, headers] of cases) {
      const reply = await api.get(path, undefined, headers);
      expect({ path, headers, status: reply.status, error: reply.body.error }).toEqual({
        path,
        headers,
        status: 406,
        error: 'not_acceptable',
      });
      expect(reply.body.message).toMatch(
        /json, csv, ndjson, parquet, arrow, xlsx \(x_format\).*application\/json/,
      );
    }
    // x_format wins over an Accept that names nothing served.
    const named = await api.get(`${results}?x_format=csv`, undefined, { accept: 'image/png' });
    expect(named.status).toBe(200);

    const legacyRefused = await api.get(legacy, undefined, { accept: 'text/plain' });
    expect(legacyRefused.status).toBe(406);
    expect(legacyRefused.body).toEqual({ detail: expect.stringMatching(/x_format/) });
  });
});
