import { MONTHLY } from './support/figures';
import { Api, L, P } from './support/api';
import { TestServer, startServer } from './support/server';

const BY_CATEGORY: Record<string, number> = {
  Bills: 6419.37,
  Entertainment: 6916.87,
  Food: 4622.55,
  Shopping: 8061.49,
  Transportation: 4205.88,
};

describe('dataset results', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let manager: string;
  let employee: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    manager = await api.userToken(admin, 'mgr', { role: 'manager' });
    employee = await api.userToken(admin, 'emp', { role: 'employee' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('gives the 12 monthly totals of expenses_by_month to the cent, newest first, to anyone', async () => {
    const reply = await api.get(`${P}/datasets/expenses_by_month/results`);
    expect(reply.status).toBe(200);
    expect(
      reply.body.data.map((row: { month: string; total_amount: number }) => [
        row.month,
        row.total_amount,
      ]),
    ).toEqual(MONTHLY);
    expect(reply.body.total_num_rows).toBe(12);
    expect(reply.body.data_details).toEqual({ num_rows: 12, orientation: 'records' });
    expect(reply.body.schema.fields).toEqual([
      {
        name: 'month',
        type: 'string',
        description: expect.any(String),
        category: 'dimension',
        condition: expect.any(String),
      },
      {
        name: 'total_amount',
        type: 'decimal',
        description: expect.any(String),
        category: 'measure',
        condition: expect.any(String),
      },
    ]);
    const total = reply.body.data.reduce(
      (sum: number, row: { total_amount: number }) => sum + Math.round(row.total_amount * 100),
      0,
    );
    expect(total).toBe(3022616);
  });

  it('groups by category with group_by=cat', async () => {
    const reply = await api.get(`${P}/datasets/expenses_grouped/results?group_by=cat`, employee);
    const totals = Object.fromEntries(
      reply.body.data.map((row: { category: string; total_amount: number }) => [
        row.category,
        row.total_amount,
      ]),
    );
    expect(totals).toEqual(BY_CATEGORY);
    expect(reply.body.data.map((row: { category: string }) => row.category)).toEqual([
      'Transportation',
      'Shopping',
      'Food',
      'Entertainment',
      'Bills',
    ]);
  });

  it('counts 344 days and 1000 transactions', async () => {
    expect(
      (await api.get(`${P}/datasets/expenses_grouped/results?group_by=day`, employee)).body
        .total_num_rows,
    ).toBe(344);
    const trans = await api.get(`${P}/datasets/expenses_grouped/results?group_by=trans`, manager);
    expect(trans.body.total_num_rows).toBe(1000);
    expect(Object.keys(trans.body.data[0])).toEqual([
      'id',
      'date',
      'category',
      'subcategory',
      'description',
      'total_amount',
    ]);
    // An employee may not group by transaction: the option is not theirs.
    expect(
      (await api.get(`${P}/datasets/expenses_grouped/results?group_by=trans`, employee)).body.error,
    ).toBe('invalid_parameter_selection');
  });

  it('carries the same values in the three orientations', async () => {
    const path = `${P}/datasets/expenses_by_month/results`;
    const records = (await api.get(`${path}?x_orientation=records`)).body;
    const rows = (await api.get(`${path}?x_orientation=rows`)).body;
    const columns = (await api.get(`${path}?x_orientation=columns`)).body;
    expect(rows.data).toEqual(
      records.data.map((r: { month: string; total_amount: number }) => [r.month, r.total_amount]),
    );
    expect(columns.data).toEqual({
      month: MONTHLY.map(([m]) => m),
      total_amount: MONTHLY.map(([, v]) => v),
    });
    expect(columns.data_details.orientation).toBe('columns');
  });

  it('slices the same rows with x_limit and x_offset, and x_select picks columns', async () => {
    const path = `${P}/datasets/expenses_grouped/results?group_by=day`;
    const all = (await api.get(`${path}&x_limit=1000`, employee)).body.data;
    const page = await api.get(`${path}&x_limit=10&x_offset=100`, employee);
    expect(page.body.data).toEqual(all.slice(100, 110));
    expect(page.body.total_num_rows).toBe(344);
    expect(page.body.data_details.num_rows).toBe(10);
    const selected = await api.get(`${path}&x_select=total_amount&x_limit=2`, employee);
    expect(Object.keys(selected.body.data[0])).toEqual(['total_amount']);
    expect((await api.get(`${path}&x_limit=0`, employee)).body).toMatchObject({
      data: [],
      total_num_rows: 344,
    });
  });

  it('answers POST like GET', async () => {
    const get = await api.get(
      `${P}/datasets/expenses_grouped/results?group_by=subcat&category=0&category=1&x_orientation=rows&x_limit=5`,
      employee,
    );
    const post = await api.request('POST', `${P}/datasets/expenses_grouped/results`, {
      token: employee,
      json: { group_by: 'subcat', category: ['0', '1'], x_orientation: 'rows', x_limit: 5 },
    });
    expect(post.status).toBe(200);
    expect(post.body).toEqual(get.body);
  });

  it('filters inclusively and matches description text literally', async () => {
    const narrow = await api.get(
      `${P}/datasets/expenses_by_month/results?start_date=2024-03-01&end_date=2024-03-31`,
    );
    expect(narrow.body.data).toEqual([{ month: '2024-03', total_amount: 3248.5 }]);
    const literal = await api.get(
      `${P}/datasets/expense_transactions/results?description_filter=%25`,
      admin,
    );
    expect(literal.status).toBe(200);
    expect(literal.body.total_num_rows).toBe(0);
  });

  it.each([
    ['x_orientation=sideways', 'invalid_request'],
    ['x_limit=-1', 'invalid_request'],
    ['x_limit=100001', 'invalid_request'],
    ['x_offset=-3', 'invalid_request'],
    ['x_select=nope', 'invalid_request'],
    ['start_date=2023-01-01', 'invalid_parameter_selection'],
    ['min_filter=15', 'invalid_parameter_selection'],
    ['start_date=nope', 'invalid_parameter_selection'],
  ])('answers %s with 400 %s', async (query, code) => {
    const reply = await api.get(`${P}/datasets/expenses_by_month/results?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe(code);
  });

  it('keeps a selection of SQL text a value', async () => {
    const reply = await api.get(
      `${P}/datasets/expense_transactions/results?description_filter=${encodeURIComponent("'; DROP TABLE expenses; --")}`,
      admin,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.total_num_rows).toBe(0);
    expect((await api.get(`${P}/datasets/expenses_by_month/results`)).body.total_num_rows).toBe(12);
  });

  it('applies scopes: 401 anonymous, 403 signed-in without the right, 404 unknown', async () => {
    expect((await api.get(`${P}/datasets/expenses_grouped/results`)).status).toBe(401);
    expect((await api.get(`${P}/datasets/expense_transactions/results`, employee)).status).toBe(
      403,
    );
    expect((await api.get(`${P}/datasets/expense_transactions/results`, admin)).status).toBe(200);
    expect((await api.get(`${P}/datasets/nope/results`, admin)).status).toBe(404);
    expect((await api.get(`${L}/dataset/nope`, admin)).body).toEqual({
      detail: expect.any(String),
    });
  });

  it("answers errors of results in each layout's shape, with their headers", async () => {
    const bad = await api.get(`${P}/datasets/expenses_by_month/results`, 'not.a.token');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer');
    expect(bad.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(bad.body).toEqual({
      statusCode: 401,
      error: 'invalid_token',
      message: expect.any(String),
    });
    const legacy = await api.get(`${L}/dataset/expenses-by-month`, 'not.a.token');
    expect(legacy.status).toBe(401);
    expect(legacy.body).toEqual({ detail: expect.any(String) });
    const invalid = await api.get(`${L}/dataset/expenses-by-month?min_filter=abc`);
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ detail: expect.any(String), message: invalid.body.detail });
    // A malformed escape in the path is Express' to answer; never a 500.
    const malformed = await api.get(`${P}/datasets/%E0%A4%A/results`);
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    expect(malformed.status).toBeLessThan(500);
  });

  it("documents each dataset's own parameters in the OpenAPI document", async () => {
    const { body } = await api.get('/docs-json');
    const operation = body.paths[`${P}/datasets/expenses_grouped/results`].get;
    const groupBy = operation.parameters.find((p: { name: string }) => p.name === 'group_by');
    expect(groupBy.schema).toEqual({
      type: 'string',
      enum: ['trans', 'day', 'month', 'cat', 'subcat'],
    });
    const category = operation.parameters.find((p: { name: string }) => p.name === 'category');
    expect(category).toMatchObject({ in: 'query', explode: true, schema: { type: 'array' } });
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['x_orientation', 'x_limit', 'x_offset', 'x_select']),
    );
    expect(
      body.paths[`${P}/dashboards/expenses_dashboard/results`].get.responses['200'].content,
    ).toHaveProperty('image/png');
  });

  it('serves the legacy result with dimensions and every row', async () => {
    const reply = await api.get(`${L}/dataset/expenses-by-month`);
    expect(reply.body.schema).toEqual({
      fields: [
        { name: 'month', type: 'string' },
        { name: 'total_amount', type: 'number' },
      ],
      dimensions: ['month'],
    });
    expect(reply.body.data).toHaveLength(12);
    const grouped = await api.get(`${L}/dataset/expenses_grouped?group-by=cat`, employee);
    expect(grouped.body.data).toHaveLength(5);
  });
});

describe('data catalog', () => {
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  const names = (items: { name: string }[]) => items.map((item) => item.name);

  it('lists exactly what each caller may open', async () => {
    const admin = await api.adminToken();
    const employee = await api.userToken(admin, 'cat_emp');
    const anonymous = (await api.get(`${P}/data-catalog`)).body;
    expect(names(anonymous.datasets)).toEqual(['expenses_by_month']);
    expect(names(anonymous.dashboards)).toEqual(['expenses_report']);
    expect(anonymous).toMatchObject({ connections: [], models: [], lineage: [] });
    const asEmployee = (await api.get(`${P}/data-catalog`, employee)).body;
    expect(names(asEmployee.datasets)).toEqual(['expenses_by_month', 'expenses_grouped']);
    expect(names(asEmployee.dashboards)).toEqual(['expenses_dashboard', 'expenses_report']);
    const asAdmin = (await api.get(`${P}/data-catalog`, admin)).body;
    expect(names(asAdmin.datasets)).toEqual([
      'expenses_by_month',
      'expenses_grouped',
      'expense_transactions',
    ]);
    expect(asAdmin.models.length).toBeGreaterThan(3);
    expect(asAdmin.connections.length).toBeGreaterThan(0);
    expect(asAdmin.lineage).toEqual(
      expect.arrayContaining([
        {
          type: 'buildtime',
          source: { type: 'model', name: 'expenses' },
          target: { type: 'model', name: 'expense_details' },
        },
        {
          type: 'runtime',
          source: { type: 'model', name: 'expenses_by_month' },
          target: { type: 'dataset', name: 'expenses_by_month' },
        },
      ]),
    );
  });

  it('describes datasets with schema, parameters and paths, and dashboards with result_format', async () => {
    const body = (await api.get(`${P}/data-catalog`)).body;
    const [dataset] = body.datasets;
    expect(dataset).toEqual({
      name: 'expenses_by_month',
      label: expect.any(String),
      description: expect.any(String),
      schema: { fields: expect.any(Array) },
      parameters: ['start_date', 'end_date', 'min_filter', 'max_filter'],
      parameters_path: `${P}/datasets/expenses_by_month/parameters`,
      result_path: `${P}/datasets/expenses_by_month/results`,
    });
    expect(body.dashboards[0]).toMatchObject({
      name: 'expenses_report',
      result_format: 'html',
      result_path: `${P}/dashboards/expenses_report/results`,
    });
    expect(body.parameters.length).toBeGreaterThan(0);
  });

  it('serves the legacy catalog without schema or parameters, anonymous allowed', async () => {
    const body = (await api.get(`${L}/data-catalog`)).body;
    expect(Object.keys(body).sort()).toEqual(['dashboards', 'datasets']);
    expect(body.datasets[0]).toEqual({
      name: 'expenses_by_month',
      label: expect.any(String),
      description: expect.any(String),
      parameters_path: `${L}/dataset/expenses_by_month/parameters`,
      result_path: `${L}/dataset/expenses_by_month`,
    });
    expect(names(body.datasets)).toEqual(['expenses_by_month']);
  });
});

describe('query-models', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer({ QUERY_TIMEOUT_MS: '1500' });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it('runs SQL over the models in the query-string form', async () => {
    const sql = encodeURIComponent('SELECT count(*) AS n, sum(amount) AS total FROM expenses');
    const reply = await api.request('POST', `${P}/query-models?x_sql_query=${sql}`, {
      token: admin,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      total_num_rows: 1,
      data_details: { num_rows: 1, orientation: 'records' },
    });
    expect(reply.body.data[0].n).toBe(1000);
    expect(reply.body.data[0].total).toBeCloseTo(30226.16, 2);
    expect(reply.body.schema.fields[0]).toMatchObject({
      name: 'n',
      type: 'integer',
      condition: '',
    });
  });

  it('runs runtime models with the given selections in the JSON form, with orientation and paging', async () => {
    const reply = await api.request('POST', `${P}/query-models`, {
      token: admin,
      json: {
        sql_query: 'SELECT * FROM expenses_by_month',
        parameters: { start_date: '2024-11-01' },
        x_orientation: 'rows',
        x_limit: 1,
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.total_num_rows).toBe(2);
    expect(reply.body.data).toEqual([['2024-12', 2124.97]]);
  });

  it.each([
    ["COPY expenses TO '/tmp/drey-leak.csv'"],
    ["ATTACH '/tmp/other.duckdb' AS other"],
    ['INSTALL httpfs'],
    ["SELECT * FROM read_csv('/etc/passwd')"],
    ['CREATE TABLE x AS SELECT 1'],
    ['DROP TABLE expenses'],
    ['SELEC nonsense'],
  ])('refuses %s with 400 invalid_sql', async (sql) => {
    const reply = await api.request('POST', `${P}/query-models`, {
      token: admin,
      json: { sql_query: sql },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_sql');
  });

  it('stops a query past the time limit with query_timeout while other requests keep being served', async () => {
    const slow = api.request('POST', `${P}/query-models`, {
      token: admin,
      json: { sql_query: 'SELECT count(*) FROM range(100000000) a, range(100000000) b' },
    });
    const started = Date.now();
    const other = await api.get(`${P}/datasets/expenses_by_month/results`);
    expect(other.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const reply = await slow;
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('query_timeout');
  });

  it('is for administrators only and is audited with its SQL', async () => {
    const user = await api.userToken(admin, 'qm_user');
    expect(
      (await api.request('POST', `${P}/query-models?x_sql_query=SELECT%201`, { token: user }))
        .status,
    ).toBe(403);
    expect((await api.request('POST', `${P}/query-models?x_sql_query=SELECT%201`)).status).toBe(
      401,
    );
    const audit = await api.get(`${P}/audit?action=query_models&limit=50`, admin);
    expect(
      audit.body.events.some((e: { details: { sql: string } }) =>
        e.details.sql.includes('count(*) AS n'),
      ),
    ).toBe(true);
  });
});
