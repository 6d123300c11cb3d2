import { P } from '../support/api';
import { currentError, useApp } from './bootstrap';

/**
 * The administrators' controllers, in process: builds and query-models (`AdminController`), the audit log
 * (`AuditController`) and the metrics (`MetricsController`, administrators only unless METRICS_PUBLIC).
 * They exist in the current layout only. Each is closed to an anonymous caller (401) and to a signed-in
 * non-admin (403) before its service is reached, and answers bad input with 400 in the current shape.
 */
describe('administration', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /** Every administrators' route, with the service call it ends in (today's names; adjust them here). */
  const routes = () => [
    {
      name: 'POST build',
      request: () => t.http().post(`${P}/build`),
      spy: () => t.spyOn('builds/builds.service', 'BuildsService', 'build'),
    },
    {
      name: 'GET builds',
      request: () => t.http().get(`${P}/builds`),
      spy: () => t.spyOn('builds/builds.service', 'BuildsService', 'history'),
    },
    {
      name: 'GET builds/{id}',
      request: () => t.http().get(`${P}/builds/1b4e28ba-2fa1-41d2-883f-0016d3cca427`),
      spy: () => t.spyOn('builds/builds.service', 'BuildsService', 'find'),
    },
    {
      name: 'POST build, Prefer: respond-async',
      request: () => t.http().post(`${P}/build`).set('Prefer', 'respond-async'),
      spy: () => t.spyOn('builds/builds.service', 'BuildsService', 'start'),
    },
    {
      name: 'GET query-models',
      request: () => t.http().get(`${P}/query-models`).query({ x_sql_query: 'SELECT 1 AS one' }),
      spy: () => t.spyOn('admin/query-models.service', 'QueryModelsService', 'query'),
    },
    {
      name: 'POST query-models',
      request: () => t.http().post(`${P}/query-models`).send({ sql_query: 'SELECT 1 AS one' }),
      spy: () => t.spyOn('admin/query-models.service', 'QueryModelsService', 'query'),
    },
    {
      name: 'GET audit',
      request: () => t.http().get(`${P}/audit`),
      spy: () => t.spyOn('audit/audit.service', 'AuditService', 'list'),
    },
  ];

  it('require a token: 401 authentication_required with WWW-Authenticate, before the service', async () => {
    for (const route of routes()) {
      const spy = route.spy();
      const reply = await route.request();
      expect([route.name, reply.status]).toEqual([route.name, 401]);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body).toEqual(currentError(401, 'authentication_required'));
      expect(spy).not.toHaveBeenCalled();
    }
  });

  it('refuse a bad token: 401 invalid_token', async () => {
    for (const route of routes()) {
      const reply = await route.request().auth('not-a-token', { type: 'bearer' });
      expect([route.name, reply.status]).toEqual([route.name, 401]);
      expect(reply.body).toEqual(currentError(401, 'invalid_token'));
    }
  });

  it('are kept from a non-admin: 403 forbidden, before the service', async () => {
    for (const route of routes()) {
      const spy = route.spy();
      const reply = await route.request().auth(t.token('erin'), { type: 'bearer' });
      expect([route.name, reply.status]).toEqual([route.name, 403]);
      expect(reply.body).toEqual(currentError(403, 'forbidden'));
      expect(spy).not.toHaveBeenCalled();
    }
  });

  it('list the builds, the first one succeeded, and rebuild on POST P/build with an empty 200', async () => {
    const admin = t.token('admin');
    const history = await t.http().get(`${P}/builds`).auth(admin, { type: 'bearer' });
    expect(history.status).toBe(200);
    expect(history.body[0]).toMatchObject({ status: 'succeeded' });

    const build = t.spyOn('builds/builds.service', 'BuildsService', 'build');
    const reply = await t.http().post(`${P}/build`).auth(admin, { type: 'bearer' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(build).toHaveBeenCalledTimes(1);
    const after = await t.http().get(`${P}/builds`).auth(admin, { type: 'bearer' });
    expect(after.body).toHaveLength(history.body.length + 1);
    expect(after.body[0]).toMatchObject({ status: 'succeeded', requested_by: 'admin' });
  });

  it('answer a build request whose body does not parse with 400 invalid_request', async () => {
    const build = t.spyOn('builds/builds.service', 'BuildsService', 'build');
    const reply = await t
      .http()
      .post(`${P}/build`)
      .auth(t.token('admin'), { type: 'bearer' })
      .set('Content-Type', 'application/json')
      .send('{"now": ');
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(
      currentError(400, 'invalid_request', 'The request body is not valid JSON'),
    );
    expect(build).not.toHaveBeenCalled();
  });

  describe('query-models', () => {
    const sql = 'SELECT count(*) AS n FROM expenses';

    it('answers the query-string form (GET and POST) and the JSON form alike', async () => {
      const admin = t.token('admin');
      const query = t.spyOn('admin/query-models.service', 'QueryModelsService', 'query');
      const replies = [
        await t
          .http()
          .get(`${P}/query-models`)
          .query({ x_sql_query: sql })
          .auth(admin, { type: 'bearer' }),
        await t
          .http()
          .post(`${P}/query-models`)
          .query({ x_sql_query: sql })
          .auth(admin, { type: 'bearer' }),
        await t
          .http()
          .post(`${P}/query-models`)
          .auth(admin, { type: 'bearer' })
          .send({ sql_query: sql }),
      ];
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        expect(reply.body.data).toEqual([{ n: expect.any(Number) }]);
      }
      expect(replies[1].body).toEqual(replies[0].body);
      expect(replies[2].body).toEqual(replies[0].body);
      // Each form parsed at the edge into the one request the service takes.
      expect(query.mock.calls.map((call) => call[1] as unknown)).toEqual([
        { sql, selections: expect.anything(), options: expect.anything() },
        { sql, selections: expect.anything(), options: expect.anything() },
        { sql, selections: expect.anything(), options: expect.anything() },
      ]);
    });

    it('answers bad input with 400: no SQL, a write, a bad built-in', async () => {
      const admin = t.token('admin');
      const missing = await t.http().get(`${P}/query-models`).auth(admin, { type: 'bearer' });
      expect([missing.status, missing.body]).toEqual([
        400,
        currentError(400, 'invalid_request', expect.stringContaining('SQL query is required')),
      ]);
      const write = await t
        .http()
        .post(`${P}/query-models`)
        .auth(admin, { type: 'bearer' })
        .send({ sql_query: 'CREATE TABLE stolen AS SELECT * FROM expenses' });
      expect([write.status, write.body]).toEqual([400, currentError(400, 'invalid_sql')]);
      const orientation = await t
        .http()
        .get(`${P}/query-models`)
        .query({ x_sql_query: sql, x_orientation: 'sideways' })
        .auth(admin, { type: 'bearer' });
      expect([orientation.status, orientation.body]).toEqual([
        400,
        currentError(400, 'invalid_request', expect.stringContaining('x_orientation')),
      ]);
    });
  });

  describe('the JSON body of query-models', () => {
    const post = (body: unknown) =>
      t
        .http()
        .post(`${P}/query-models`)
        .auth(t.token('admin'), { type: 'bearer' })
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));
    const refused = (message: string) => [400, currentError(400, 'invalid_request', message)];

    it('refuses a missing or non-string sql_query, and built-ins of the wrong JSON type, naming them', async () => {
      const required = 'The SQL query is required (x_sql_query, or sql_query in a JSON body)';
      for (const body of [{}, { sql_query: null }, { sql_query: 5 }, { sql_query: '  ' }]) {
        const reply = await post(body);
        expect([reply.status, reply.body]).toEqual(refused(required));
      }
      const cases: [Record<string, unknown>, string][] = [
        [{ x_limit: 1.5 }, 'x_limit must be a whole number in a JSON body'],
        [{ x_offset: '2' }, 'x_offset must be a whole number in a JSON body'],
        [{ x_select: 'id' }, 'x_select must be an array of column names in a JSON body'],
        [{ x_select: ['id', 1] }, 'x_select must be an array of column names in a JSON body'],
        [{ x_orientation: 1 }, 'x_orientation must be a string in a JSON body'],
        [{ x_parent_param: true }, 'x_parent_param must be a string in a JSON body'],
        [{ x_verify_params: 'yes' }, 'x_verify_params must be true or false in a JSON body'],
        [{ parameters: [] }, 'The body must be a JSON object of parameter selections'],
        [{ x_orientation: 'sideways' }, 'x_orientation must be one of records, rows, columns'],
      ];
      for (const [fields, message] of cases) {
        const reply = await post({ sql_query: 'SELECT 1 AS one', ...fields });
        expect([reply.status, reply.body]).toEqual(refused(message));
      }
    });

    it('ignores keys it does not know and takes null as not given, as it always has', async () => {
      const reply = await post({
        sql_query: 'SELECT 1 AS one',
        parameters: null,
        x_limit: null,
        x_orientation: 'rows',
        something_else: { a: 1 },
      });
      expect([reply.status, reply.body.data]).toEqual([200, [[1]]]);
    });
  });

  describe('the audit log', () => {
    it('lists the events of one actor and action', async () => {
      const reply = await t
        .http()
        .get(`${P}/audit`)
        .query({ actor: 'erin', action: 'login', limit: '5' })
        .auth(t.token('admin'), { type: 'bearer' });
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body)).toEqual(['events', 'next_offset']);
      expect(reply.body.events.length).toBeGreaterThan(0);
      for (const event of reply.body.events) {
        expect(event).toMatchObject({ actor: 'erin', action: 'login' });
      }
    });

    it('answers a query out of its bounds with 400 invalid_request naming the field', async () => {
      const audit = t.spyOn('audit/audit.service', 'AuditService', 'list');
      for (const [query, field] of [
        [{ limit: '0' }, 'limit'],
        [{ limit: '1001' }, 'limit'],
        [{ offset: '-1' }, 'offset'],
        [{ outcome: 'maybe' }, 'outcome'],
        [{ since: 'yesterday' }, 'since'],
      ] as const) {
        const reply = await t
          .http()
          .get(`${P}/audit`)
          .query(query)
          .auth(t.token('admin'), { type: 'bearer' });
        expect([field, reply.status, reply.body]).toEqual([
          field,
          400,
          currentError(400, 'invalid_request', expect.stringContaining(field)),
        ]);
      }
      expect(audit).not.toHaveBeenCalled();
    });
  });

  describe('the metrics', () => {
    it('are for administrators: 401 without a token, 403 for a non-admin, the text format for an admin', async () => {
      const exposition = t.spyOn('metrics/metrics.service', 'MetricsService', 'exposition');
      const anonymous = await t.http().get('/metrics');
      expect([anonymous.status, anonymous.body]).toEqual([
        401,
        currentError(401, 'authentication_required'),
      ]);
      const employee = await t.http().get('/metrics').auth(t.token('erin'), { type: 'bearer' });
      expect([employee.status, employee.body]).toEqual([403, currentError(403, 'forbidden')]);
      const bad = await t.http().get('/metrics').auth('not-a-token', { type: 'bearer' });
      expect([bad.status, bad.body]).toEqual([401, currentError(401, 'invalid_token')]);

      const admin = await t.http().get('/metrics').auth(t.token('admin'), { type: 'bearer' });
      expect(admin.status).toBe(200);
      expect(admin.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(admin.text).toMatch(/^# HELP /m);
      // The service decides who may read them (METRICS_PUBLIC), so every signed-in or anonymous call reaches it.
      expect(exposition).toHaveBeenCalledTimes(3);
    });
  });
});
