import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, L, P } from './support/api';
import { REPO_ROOT, TestServer, startServer } from './support/server';

/** The compatibility routes and shapes that the real browser clients need (decisions of 2026-11-23). */
describe('compatibility with the b-era and 0.4 clients', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it('reports the package version, 0.5.x, as service_version', async () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { body } = await api.get(P);
    expect(body.service_version).toBe(pkg.version);
    expect(body.service_version).toMatch(/^0\.5\.\d+$/);
  });

  it('lists the project at GET /service-v0 with legacy paths that work', async () => {
    const reply = await api.get('/service-v0');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      name: 'expenses',
      label: 'Expenses',
      versions: [
        {
          major_version: 1,
          minor_versions: [0],
          token_path: `${L}/token`,
          data_catalog_path: `${L}/data-catalog`,
        },
      ],
    });
    const [version] = reply.body.versions;
    const catalog = await api.get(version.data_catalog_path);
    expect(catalog.status).toBe(200);
    expect(catalog.body.datasets.map((d: { name: string }) => d.name)).toContain(
      'expenses_by_month',
    );
    const token = await api.request('POST', version.token_path, {
      form: { username: 'admin', password: t.env.ADMIN_PASSWORD },
    });
    expect(token.status).toBe(200);
  });

  it('runs query-models as a GET with the query-string form, for administrators only', async () => {
    const sql = 'SELECT count(*) AS n, sum(amount) AS total FROM expenses';
    const path = `${P}/query-models?x_sql_query=${encodeURIComponent(sql)}&x_orientation=rows`;
    const reply = await api.get(path, admin);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual([[1000, 30226.16]]);
    expect(reply.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['n', 'total']);
    const posted = await api.request('POST', path, { token: admin });
    expect(posted.body.data).toEqual(reply.body.data);
    const paged = await api.get(
      `${P}/query-models?x_sql_query=${encodeURIComponent('SELECT id FROM expenses ORDER BY id')}&x_limit=5&x_offset=10`,
      admin,
    );
    expect(paged.body.total_num_rows).toBe(1000);
    expect(paged.body.data.map((r: { id: number }) => r.id)).toEqual([11, 12, 13, 14, 15]);
    const employee = await api.userToken(admin, 'qm_emp');
    expect((await api.get(path, employee)).body.error).toBe('forbidden');
    expect((await api.get(path)).status).toBe(401);
    const bad = await api.get(`${P}/query-models?x_sql_query=SELEC`, admin);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_sql');
    const missing = await api.get(`${P}/query-models`, admin);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
  });

  it.each(['', P])(
    'serves ReDoc at %s/redoc over the same document, from the service',
    async (base) => {
      const page = await api.get(`${base}/redoc`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toMatch(
        /^default-src 'none';script-src 'self';/,
      );
      const script = /<script src="([^"]+)"/.exec(page.text)?.[1];
      const specUrl = /spec-url="([^"]+)"/.exec(page.text)?.[1];
      expect(script).toBe(`${base}/redoc/redoc.standalone.js`);
      expect(specUrl).toBe(`${base}/docs-json`);
      expect(page.text).not.toMatch(/https?:\/\//);
      const bundle = await fetch(`${t.url}${script}`);
      expect(bundle.status).toBe(200);
      expect(bundle.headers.get('content-type')).toMatch(/javascript/);
      const code = await bundle.text();
      expect(code.length).toBeGreaterThan(500_000);
      expect(code).not.toContain('cdn.redoc.ly');
      const spec = await api.get(specUrl!);
      const paths = Object.keys(spec.body.paths as object);
      expect(paths.some((path) => path.endsWith('/query-models'))).toBe(true);
      expect(paths).toContain('/service-v0');
    },
  );

  it('adds legacy 400s a message beside detail, and only 400s', async () => {
    const bad = await api.get(`${L}/dataset/expenses-by-month?min_filter=abc`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ detail: expect.any(String), message: bad.body.detail });
    const unauthorized = await api.get(`${L}/dataset/expenses-grouped`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body).toEqual({ detail: expect.any(String) });
    const missing = await api.get(`${L}/dataset/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: expect.any(String) });
    const current = await api.get(`${P}/datasets/expenses_by_month/results?min_filter=abc`);
    expect(Object.keys(current.body).sort()).toEqual(['error', 'message', 'statusCode']);
  });

  it('ignores keys that are not user fields, and accepts the path username in PUT', async () => {
    const created = await api.request('POST', `${P}/users`, {
      token: admin,
      json: {
        username: 'studio_made',
        password: 'studio-pass',
        is_admin: false,
        role: 'manager',
        __prev__username: 'studio_mad',
        __prev__password: '',
      },
    });
    expect(created.status).toBe(200);
    const user = await api.login('studio_made', 'studio-pass');
    expect((await api.get(`${P}/me`, user)).body).toEqual({
      username: 'studio_made',
      is_admin: false,
      role: 'manager',
    });
    const updated = await api.request('PUT', `${P}/users/studio_made`, {
      token: admin,
      json: { username: 'studio_made', is_admin: false, role: 'employee', __prev__role: 'x' },
    });
    expect(updated.status).toBe(200);
    expect((await api.get(`${P}/me`, user)).body.role).toBe('employee');
    const renamed = await api.request('PUT', `${P}/users/studio_made`, {
      token: admin,
      json: { username: 'someone_else' },
    });
    expect(renamed.status).toBe(400);
    expect(renamed.body.error).toBe('invalid_user');
    const password = await api.request('PUT', `${P}/users/studio_made`, {
      token: admin,
      json: { username: 'studio_made', password: 'x' },
    });
    expect(password.status).toBe(400);
  });

  it("gives administrators the catalog's models, connections and lineage in the b-era shapes", async () => {
    const { body } = await api.get(`${P}/data-catalog`, admin);
    for (const connection of body.connections) {
      expect(connection).toMatchObject({ name: expect.any(String), label: expect.any(String) });
    }
    const models = new Map<string, Record<string, unknown>>(
      body.models.map((m: { name: string }) => [m.name, m]),
    );
    expect(models.get('expenses')).toMatchObject({
      model_type: 'seed',
      is_queryable: true,
      config: { description: expect.any(String), columns: expect.any(Array) },
    });
    expect(models.get('expense_details')).toMatchObject({
      model_type: 'build',
      config: { materialization: 'table', depends_on: ['expenses', 'subcategories', 'categories'] },
    });
    expect(models.get('expenses_by_month')).toMatchObject({ model_type: 'federate' });
    for (const model of body.models) {
      expect(['seed', 'source', 'build', 'dbview', 'federate']).toContain(model.model_type);
      expect(typeof model.config).toBe('object');
      expect(typeof model.is_queryable).toBe('boolean');
    }
    const names = new Set(models.keys());
    for (const edge of body.lineage) {
      expect(['buildtime', 'runtime']).toContain(edge.type);
      for (const node of [edge.source, edge.target]) {
        expect(['model', 'dataset', 'dashboard']).toContain(node.type);
        if (node.type === 'model') expect(names.has(node.name)).toBe(true);
      }
    }
    expect(body.lineage).toEqual(
      expect.arrayContaining([
        {
          type: 'buildtime',
          source: { type: 'model', name: 'expenses' },
          target: { type: 'model', name: 'expense_details' },
        },
        {
          type: 'runtime',
          source: { type: 'model', name: 'expense_details' },
          target: { type: 'model', name: 'expenses_by_month' },
        },
        {
          type: 'runtime',
          source: { type: 'model', name: 'expenses_by_month' },
          target: { type: 'dataset', name: 'expenses_by_month' },
        },
        {
          type: 'runtime',
          source: { type: 'dataset', name: 'expenses_grouped' },
          target: { type: 'dashboard', name: 'expenses_dashboard' },
        },
      ]),
    );
    // Every model of the project has a node; every dataset is fed by its model.
    const fed = body.lineage
      .filter((e: { target: { type: string } }) => e.target.type === 'dataset')
      .map((e: { target: { name: string } }) => e.target.name);
    expect(fed.sort()).toEqual(body.datasets.map((d: { name: string }) => d.name).sort());
  });
});
