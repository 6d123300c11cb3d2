import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MONTHLY } from './support/figures';
import { http } from './support/http';
import { until } from './support/wait';
import { counter, executions } from './support/observe';
import { Api, BENCH_L, BENCH_P, L, P, decodeJwt } from './support/api';
import { BENCH_PROJECT, EXAMPLE_PROJECT, TestServer, startServer } from './support/server';

/** Models added to a copy of the example: one reading the caller, one slow, one with awkward text. */
const EXTRA_MODELS: Record<string, string> = {
  'models/by_role.yml': 'kind: runtime\n',
  'models/by_role.sql':
    "SELECT {{ user.role }} AS role, count(*) AS expenses FROM {{ ref('expenses') }}",
  'models/slow_count.yml': 'kind: runtime\n',
  // Slow enough (a fraction of a second) that identical requests sent together overlap.
  'models/slow_count.sql':
    'SELECT {{ params.start_date }} AS since, count(*) AS n FROM range(40000000) AS t(i) WHERE i % 7 = 0',
  'models/tricky_text.yml': 'kind: runtime\n',
  'models/tricky_text.sql': [
    "SELECT 1 AS n, 'a,b' AS t UNION ALL SELECT 2, 'say \"hi\"' UNION ALL",
    "SELECT 3, 'two' || chr(10) || 'lines' UNION ALL SELECT 4, NULL UNION ALL SELECT 5, 'café ✓'",
    'ORDER BY n',
  ].join('\n'),
};
const EXTRA_DATASETS = `
  - { name: by_role, scope: protected, model: by_role }
  - { name: slow_count, scope: public, model: slow_count, parameters: [start_date] }
  - { name: tricky_text, scope: public, model: tricky_text }
`;

function projectCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'drey-cache-project-'));
  cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
  for (const [file, text] of Object.entries(EXTRA_MODELS)) writeFileSync(join(dir, file), text);
  const manifest = readFileSync(join(dir, 'project.yml'), 'utf8');
  writeFileSync(
    join(dir, 'project.yml'),
    manifest.replace(/^dashboards:/m, `${EXTRA_DATASETS}\ndashboards:`),
  );
  return dir;
}

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') [field, i] = [field + '"', i + 1];
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') [record, field] = [[...record, field], ''];
    else if (char === '\r' && text[i + 1] === '\n') {
      records.push([...record, field]);
      [record, field, i] = [[], '', i + 1];
    } else field += char;
  }
  return records;
}

describe('dataset results cache', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let projectDir: string;

  beforeAll(async () => {
    projectDir = projectCopy();
    t = await startServer({ PROJECT_DIR: projectDir, METRICS_PUBLIC: 'true' });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    rmSync(projectDir, { recursive: true, force: true });
  });

  const byMonth = `${P}/datasets/expenses_by_month/results`;
  const pairs = (data: { month: string; total_amount: number }[]) =>
    data.map((row) => [row.month, row.total_amount]);

  it('answers a repeated request from the cache with the same figures, in both layouts', async () => {
    const first = await api.get(byMonth);
    expect(pairs(first.body.data)).toEqual(MONTHLY);
    expect(executions(t.server, 'expenses_by_month')).toHaveLength(1);
    const again = await api.get(byMonth);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const legacy = await api.get(`${L}/dataset/expenses-by-month`);
    expect(pairs(legacy.body.data)).toEqual(MONTHLY);
    expect(executions(t.server, 'expenses_by_month')).toHaveLength(1);
    const labels = (outcome: string) => `dataset="expenses_by_month",outcome="${outcome}"`;
    expect(await counter(t.url, 'drey_result_cache_requests_total', labels('executed'))).toBe(1);
    expect(await counter(t.url, 'drey_result_cache_requests_total', labels('page'))).toBe(1);
    expect(await counter(t.url, 'drey_result_cache_requests_total', labels('memory'))).toBe(1);
  });

  it('pages, selects columns and orients from the cached result, with the whole result’s values', async () => {
    const path = `${byMonth}?min_filter=10`;
    const whole = (await api.get(`${path}&x_orientation=rows`)).body;
    const ran = executions(t.server, 'expenses_by_month').length;
    const page = await api.get(`${path}&x_offset=3&x_limit=4`);
    expect(page.body.data).toEqual(
      whole.data
        .slice(3, 7)
        .map(([month, total]: [string, number]) => ({ month, total_amount: total })),
    );
    expect(page.body.total_num_rows).toBe(whole.total_num_rows);
    const columns = await api.get(`${path}&x_orientation=columns&x_select=total_amount`);
    expect(columns.body.data).toEqual({
      total_amount: whole.data.map((row: [string, number]) => row[1]),
    });
    expect(columns.body.schema.fields.map((f: { name: string }) => f.name)).toEqual([
      'total_amount',
    ]);
    expect(executions(t.server, 'expenses_by_month')).toHaveLength(ran);
  });

  it('answers If-None-Match with 304; a new build changes the ETag and runs the query anew', async () => {
    const first = await api.get(byMonth);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^".+"$/);
    const unchanged = await api.get(byMonth, undefined, { 'If-None-Match': etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.get('etag')).toBe(etag);
    const ran = executions(t.server, 'expenses_by_month').length;

    expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    const rebuilt = await api.get(byMonth, undefined, { 'If-None-Match': etag });
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.headers.get('etag')).not.toBe(etag);
    expect(pairs(rebuilt.body.data)).toEqual(MONTHLY);
    const lines = executions(t.server, 'expenses_by_month');
    expect(lines).toHaveLength(ran + 1);
    expect(String(lines[lines.length - 1].key)).toMatch(new RegExp(`^${latest.id}:`));
  });

  it('keeps the results of a model reading user.role apart for each role', async () => {
    const manager = await api.userToken(admin, 'cache_mgr', { role: 'manager' });
    const employee = await api.userToken(admin, 'cache_emp', { role: 'employee' });
    const otherManager = await api.userToken(admin, 'cache_mgr2', { role: 'manager' });
    const path = `${P}/datasets/by_role/results`;
    expect((await api.get(path, manager)).body.data).toEqual([{ role: 'manager', expenses: 1000 }]);
    expect((await api.get(path, employee)).body.data).toEqual([
      { role: 'employee', expenses: 1000 },
    ]);
    expect((await api.get(path, manager)).body.data[0].role).toBe('manager');
    // The model reads the role, not the name: another manager shares the managers' result.
    expect((await api.get(path, otherManager)).body.data[0].role).toBe('manager');
    expect(executions(t.server, 'by_role')).toHaveLength(2);
  });

  it('streams every row as CSV and NDJSON, quoted as RFC 4180 says', async () => {
    const csv = await api.get(`${P}/datasets/tricky_text/results`, undefined, {
      Accept: 'text/csv',
    });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="tricky_text.csv"');
    // Every text cell quoted (docs/api.md, "CSV and spreadsheets"); x_csv_formulas=raw quotes only where needed.
    expect(csv.text).toBe(
      'n,t\r\n1,"a,b"\r\n2,"say ""hi"""\r\n3,"two\nlines"\r\n4,\r\n5,"café ✓"\r\n',
    );
    const raw = await api.get(`${P}/datasets/tricky_text/results?x_csv_formulas=raw`, undefined, {
      Accept: 'text/csv',
    });
    expect(raw.text).toBe(
      'n,t\r\n1,"a,b"\r\n2,"say ""hi"""\r\n3,"two\nlines"\r\n4,\r\n5,café ✓\r\n',
    );
    // Read with fetch: the test client would try to parse the whole NDJSON body as one JSON value.
    const ndjson = await fetch(`${t.url}${P}/datasets/tricky_text/results`, {
      headers: { Accept: 'application/x-ndjson' },
    });
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).trimEnd().split('\n');
    const json = await api.get(`${P}/datasets/tricky_text/results`);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(json.body.data);

    const expenses = await api.get(`${P}/datasets/expense_transactions/results`, admin, {
      Accept: 'text/csv',
    });
    const [header, ...rows] = parseCsv(expenses.text);
    expect(header).toEqual(['id', 'date', 'category', 'subcategory', 'description', 'amount']);
    expect(rows).toHaveLength(1000);
    const cents = rows.reduce((sum, row) => sum + Math.round(Number(row[5]) * 100), 0);
    expect(cents).toBe(3022616);
  });

  it('answers a kept response with the headers of a first answer, and still checks every request', async () => {
    const manager = await api.userToken(admin, 'kept_mgr', { role: 'manager' });
    const path = `${P}/datasets/by_role/results?x_orientation=rows`;
    const first = await api.get(path, manager);
    const kept = await api.get(path, manager);
    expect(kept.text).toBe(first.text);
    for (const header of ['content-type', 'etag', 'content-length', 'applied-username']) {
      expect(kept.headers.get(header)).toBe(first.headers.get(header));
    }
    expect(kept.headers.get('x-request-id')).toEqual(expect.any(String));
    // The same bytes are kept, yet scope, project and token are checked on each request.
    expect((await api.get(path)).status).toBe(401);
    expect((await api.get(path.replace('/expenses/v1/', '/other/v1/'), manager)).status).toBe(404);
    expect((await api.get(path, `${manager}x`)).status).toBe(401);
    expect((await api.get(`${path}&x_limit=-1`, manager)).status).toBe(400);
    const legacy = `${L}/dataset/expenses-by-month`;
    expect((await api.get(legacy)).text).toBe((await api.get(legacy)).text);
  });

  it('logs and counts a kept response as the route does, and answers its ETag with 304', async () => {
    const path = `${P}/datasets/expenses_by_month/results?max_filter=150`;
    const route = `method="GET",route="/api/service-v0/project/:project/:version/datasets/:dataset/results",status="200"`;
    const before = await counter(t.url, 'drey_http_requests_total', route);
    const first = await api.get(path, undefined, { 'X-Request-Id': 'front-door-1' });
    const kept = await api.get(path, undefined, { 'X-Request-Id': 'front-door-2' });
    expect(kept.text).toBe(first.text);
    expect(kept.headers.get('x-request-id')).toBe('front-door-2');
    expect(await counter(t.url, 'drey_http_requests_total', route)).toBe(before + 2);
    const lines = (id: string) =>
      t.server.logs.filter((line) => line.msg === 'request' && line.requestId === id);
    await until(
      () => Promise.resolve(lines('front-door-2')),
      (found) => found.length === 1,
    );
    for (const id of ['front-door-1', 'front-door-2']) {
      expect(lines(id)).toEqual([
        expect.objectContaining({ method: 'GET', path: path.split('?')[0], status: 200 }),
      ]);
    }
    // The query ran in the first request's context: its log line carries that request's id.
    expect(executions(t.server, 'expenses_by_month')).toContainEqual(
      expect.objectContaining({ requestId: 'front-door-1' }),
    );
    const etag = kept.headers.get('etag') ?? '';
    const unchanged = await api.get(path, undefined, { 'If-None-Match': etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect(unchanged.text).toBe('');
  });

  it('leaves cross-origin requests to the CORS handling, kept response or not', async () => {
    const cors = await t.another({ CORS_ORIGINS: 'https://app.example' });
    const path = `${P}/datasets/expenses_by_month/results?max_filter=120`;
    const origin = { Origin: 'https://app.example' };
    const replies = [];
    for (let i = 0; i < 2; i++) replies.push(await http(`${cors.url}${path}`, { headers: origin }));
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.headers.get('access-control-allow-origin')).toBe('https://app.example');
    }
    expect(replies[1].text).toBe(replies[0].text);
  });

  it('refuses a revoked token at once on another process, even for a kept response', async () => {
    const second = await t.another();
    const api2 = new Api(second.url);
    const created = await api.request('POST', `${P}/tokens`, {
      token: admin,
      json: { title: 'kept and revoked' },
    });
    const token = created.body.access_token as string;
    const path = `${P}/datasets/expenses_by_month/results?max_filter=200`;
    expect((await api2.get(path, token)).status).toBe(200);
    expect((await api2.get(path, token)).status).toBe(200);
    const id = decodeJwt(token).jti as string;
    expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
    expect((await api2.get(path, token)).status).toBe(401);
    expect((await api2.get(path)).status).toBe(200);
  });

  it('runs a cold query once for identical requests sent together to two processes', async () => {
    const second = await t.another();
    const api2 = new Api(second.url);
    const path = `${P}/datasets/slow_count/results?start_date=2024-03-05`;
    const replies = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? api : api2).get(path)),
    );
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200));
    expect(new Set(replies.map((reply) => reply.text)).size).toBe(1);
    expect(replies[0].body.data).toEqual([{ since: '2024-03-05', n: 5714286 }]);
    const ran = [...executions(t.server, 'slow_count'), ...executions(second, 'slow_count')];
    expect(ran).toHaveLength(1);
    // The others waited for that execution or read its stored result; none ran the query.
    const answered = async (url: string, outcome: string) =>
      counter(url, 'drey_result_cache_requests_total', `dataset="slow_count",outcome="${outcome}"`);
    let joined = 0;
    let stored = 0;
    for (const url of [t.url, second.url]) {
      joined += await answered(url, 'joined');
      stored += await answered(url, 'shared');
    }
    expect(joined + stored).toBe(23);
    // The query outlasts the sending of the requests: some of them did wait for the running query.
    expect(joined).toBeGreaterThan(0);
  });
});

/** The benchmark's project (bench/project): its generated orders table, 20,000 rows in the tests. */
describe('dataset results on the benchmark project', () => {
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    t = await startServer({ PROJECT_DIR: BENCH_PROJECT });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  it('takes a multi-select in any order for the same request (order_matters is off)', async () => {
    const path = `${BENCH_P}/datasets/orders_summary/results?order_dates=2023-05-01&order_dates=2023-05-31`;
    const one = await api.get(`${path}&order_regions=West&order_regions=East`);
    const other = await api.get(`${path}&order_regions=East&order_regions=West`);
    expect(other.text).toBe(one.text);
    expect(other.headers.get('etag')).toBe(one.headers.get('etag'));
    expect(new Set(one.body.data.map((row: { region: string }) => row.region))).toEqual(
      new Set(['East', 'West']),
    );
    expect(executions(t.server, 'orders_summary')).toHaveLength(1);
  });

  it('exports every order as CSV, in order number order, as JSON has them', async () => {
    const orders = await api.get(`${BENCH_P}/datasets/orders_detail/results`, undefined, {
      Accept: 'text/csv',
    });
    const records = parseCsv(orders.text);
    expect(records).toHaveLength(20001);
    expect(records.slice(1).map((record) => Number(record[0]))).toEqual(
      Array.from({ length: 20000 }, (_, i) => i + 1),
    );
    const first = (await api.get(`${BENCH_P}/datasets/orders_detail/results?x_limit=1`)).body
      .data[0] as Record<string, unknown>;
    // DuckDB's CSV writer writes a DECIMAL(10,2) at its scale (`1.00`), where JSON has the number 1.
    expect(records[1].map((value, index) => (index >= 7 ? Number(value) : value))).toEqual(
      records[0].map((name, index) => (index >= 7 ? first[name] : String(first[name]))),
    );
    expect(records[0].slice(7)).toEqual(['unit_price', 'amount']);
    expect(records[1][8]).toMatch(/^\d+\.\d\d$/);
    // x_select picks the columns, in its order; x_offset and x_limit page an export as they page JSON.
    const picked = await api.get(
      `${BENCH_P}/datasets/orders_detail/results?x_select=amount&x_select=order_id&x_offset=10&x_limit=3`,
      undefined,
      { Accept: 'text/csv' },
    );
    const pickedRecords = parseCsv(picked.text);
    expect(pickedRecords[0]).toEqual(['amount', 'order_id']);
    expect(pickedRecords.slice(1).map((record) => record[1])).toEqual(['11', '12', '13']);
  });

  it('writes a large JSON page in pieces, whole and with its ETag, in both layouts', async () => {
    const path = `${BENCH_P}/datasets/orders_detail/results?x_limit=12000&x_offset=5`;
    const page = await api.get(path);
    expect(page.status).toBe(200);
    expect(page.headers.get('etag')).toEqual(expect.any(String));
    expect(page.body.data).toHaveLength(12000);
    expect(page.body.data[0].order_id).toBe(6);
    expect(page.body.data[11999].order_id).toBe(12005);
    expect((await api.get(path)).text).toBe(page.text);
    const legacy = await api.get(`${BENCH_L}/dataset/orders-detail`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.data).toHaveLength(20000);
  });
});
