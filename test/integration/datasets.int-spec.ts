import { L, P } from '../support/api';
import { useApp } from './bootstrap';

/**
 * The dataset results controllers of both layouts, in process: who may read, what a bad selection answers,
 * the shape of each layout's result, and that every request, GET (the commonest) or POST, current or legacy,
 * is answered by the one DatasetReplies.reply, over the results reader (DatasetsService).
 */
describe('dataset results', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /** The service call every results request ends in (today's name; the one place to adjust). */
  const serviceCalls = () => t.spyOn('datasets/dataset-replies', 'DatasetReplies', 'reply');

  describe('current layout', () => {
    const results = (dataset: string) => `${P}/datasets/${dataset}/results`;

    it('answers a public dataset to an anonymous caller, paged and shaped', async () => {
      const reply = await t.http().get(results('expenses_by_month')).query({ x_limit: '2' });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Object.keys(reply.body)).toEqual(['schema', 'total_num_rows', 'data_details', 'data']);
      expect(reply.body.total_num_rows).toBe(12);
      expect(reply.body.data_details).toEqual({ num_rows: 2, orientation: 'records' });
      expect(reply.body.data).toHaveLength(2);
      expect(reply.body.schema.fields.map((field: { name: string }) => field.name)).toEqual(
        Object.keys(reply.body.data[0]),
      );
    });

    it('answers a POST with its selections and built-ins in the JSON body', async () => {
      const reply = await t
        .http()
        .post(results('expenses_grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .send({ group_by: 'cat', x_orientation: 'rows', x_limit: 3 });
      expect(reply.status).toBe(200);
      expect(reply.body.data_details).toEqual({ num_rows: 3, orientation: 'rows' });
      expect(Array.isArray(reply.body.data[0])).toBe(true);
    });

    it('requires a signed-in caller for a protected dataset, on GET and POST', async () => {
      const get = await t.http().get(results('expenses_grouped'));
      expect(get.status).toBe(401);
      expect(get.headers['www-authenticate']).toBe('Bearer');
      expect(get.body).toEqual({
        statusCode: 401,
        error: 'authentication_required',
        message: expect.any(String),
      });
      const post = await t.http().post(results('expenses_grouped')).send({});
      expect(post.status).toBe(401);
      expect(post.body).toEqual(get.body);
    });

    it('refuses a bad token even on a public dataset', async () => {
      const reply = await t
        .http()
        .get(results('expenses_by_month'))
        .auth('not-a-token', { type: 'bearer' });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        statusCode: 401,
        error: 'invalid_token',
        message: expect.any(String),
      });
    });

    it('keeps a private dataset from a non-admin', async () => {
      const reply = await t
        .http()
        .get(results('expense_transactions'))
        .auth(t.token('erin'), { type: 'bearer' });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({
        statusCode: 403,
        error: 'forbidden',
        message: expect.any(String),
      });
    });

    it('answers 400 invalid_request to a bad built-in and invalid_parameter_selection to a bad option', async () => {
      const orientation = await t
        .http()
        .get(results('expenses_by_month'))
        .query({ x_orientation: 'sideways' });
      expect(orientation.status).toBe(400);
      expect(orientation.body).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message: expect.stringContaining('x_orientation'),
      });
      const option = await t
        .http()
        .post(results('expenses_grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .send({ group_by: 'no-such-option' });
      expect(option.status).toBe(400);
      expect(option.body).toEqual({
        statusCode: 400,
        error: 'invalid_parameter_selection',
        message: expect.any(String),
      });
    });

    it('refuses JSON built-ins of another type than the document states (x_select a string, x_limit text)', async () => {
      const invalid = (message: string) => ({
        statusCode: 400,
        error: 'invalid_request',
        message: expect.stringContaining(message),
      });
      for (const [body, message] of [
        [{ x_select: 'month' }, 'x_select must be an array'],
        [{ x_select: [1] }, 'x_select must be an array'],
        [{ x_limit: '2' }, 'x_limit must be a whole number'],
        [{ x_limit: 1.5 }, 'x_limit must be a whole number'],
        [{ x_offset: true }, 'x_offset must be a whole number'],
        [{ x_orientation: ['rows'] }, 'x_orientation must be a string'],
        [{ x_verify_params: 'true' }, 'x_verify_params must be true or false'],
        [{ x_limit: 100_001 }, 'x_limit must be at most 100000'],
      ] as const) {
        const reply = await t.http().post(results('expenses_by_month')).send(body);
        expect([reply.status, reply.body]).toEqual([400, invalid(message)]);
      }
      // The forms the document states still pass; on GET a single x_select is one column.
      const post = await t
        .http()
        .post(results('expenses_by_month'))
        .send({ x_select: ['month'], x_limit: 2, x_verify_params: false });
      expect(post.status).toBe(200);
      const get = await t.http().get(results('expenses_by_month')).query({ x_select: 'month' });
      expect(get.status).toBe(200);
      expect(get.body.schema.fields.map((field: { name: string }) => field.name)).toEqual([
        'month',
      ]);
    });

    it('refuses an x_parent_param that names no parameter of the endpoint', async () => {
      const parameters = `${P}/datasets/expenses_by_month/parameters`;
      for (const [request, value] of [
        [t.http().get(parameters).query({ x_parent_param: 'group_by' }), 'group_by'],
        [t.http().post(parameters).send({ x_parent_param: 'no_such' }), 'no_such'],
      ] as const) {
        const reply = await request;
        expect([reply.status, reply.body]).toEqual([
          400,
          {
            statusCode: 400,
            error: 'invalid_request',
            message: expect.stringContaining(`x_parent_param "${value}" is not a parameter`),
          },
        ]);
      }
      const empty = await t.http().get(parameters).query({ x_parent_param: '' });
      expect(empty.status).toBe(400);
      const own = await t.http().get(parameters).query({ x_parent_param: 'start_date' });
      expect(own.status).toBe(200);
      // The legacy layout keeps the 0.4 service's reading of an empty one (no trigger).
      const legacy = await t
        .http()
        .get(`${L}/dataset/expenses-by-month/parameters`)
        .query({ x_parent_param: '' });
      expect(legacy.status).toBe(200);
      const legacyUnknown = await t
        .http()
        .get(`${L}/dataset/expenses-by-month/parameters`)
        .query({ x_parent_param: 'no-such' });
      expect([legacyUnknown.status, legacyUnknown.body.detail]).toEqual([
        400,
        expect.stringContaining('x_parent_param "no_such" is not a parameter'),
      ]);
    });

    it('refuses query-models given both forms at once (the JSON body was ignored)', async () => {
      const admin = t.token('admin');
      const both = await t
        .http()
        .post(`${P}/query-models`)
        .query({ x_sql_query: 'SELECT 1 AS one' })
        .auth(admin, { type: 'bearer' })
        .send({ x_limit: 100_001 });
      expect([both.status, both.body.error]).toEqual([400, 'invalid_request']);
      const query = await t
        .http()
        .post(`${P}/query-models`)
        .query({ x_sql_query: 'SELECT 1 AS one' })
        .auth(admin, { type: 'bearer' });
      expect(query.status).toBe(200);
      const body = await t
        .http()
        .post(`${P}/query-models`)
        .auth(admin, { type: 'bearer' })
        .send({ sql_query: 'SELECT 1 AS one', x_limit: 1 });
      expect(body.status).toBe(200);
    });

    it('answers 404 not_found for a dataset the project does not have', async () => {
      const reply = await t.http().get(results('no_such_dataset'));
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({
        statusCode: 404,
        error: 'not_found',
        message: expect.any(String),
      });
    });
  });

  describe('legacy layout', () => {
    const results = (dataset: string) => `${L}/dataset/${dataset}`;

    it('answers every row as records, with the schema and its dimensions', async () => {
      const reply = await t.http().get(results('expenses_by_month'));
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body)).toEqual(['schema', 'data']);
      expect(Object.keys(reply.body.schema)).toEqual(['fields', 'dimensions']);
      expect(reply.body.data).toHaveLength(12);
      for (const field of reply.body.schema.fields) {
        expect(['string', 'number', 'integer', 'boolean', 'datetime']).toContain(field.type);
      }
    });

    it('takes hyphens for underscores in dataset and parameter names', async () => {
      const underscores = await t
        .http()
        .get(results('expenses_grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .query({ group_by: 'month' });
      const hyphens = await t
        .http()
        .get(results('expenses-grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .query({ 'group-by': 'month' });
      expect(underscores.status).toBe(200);
      expect(hyphens.status).toBe(200);
      expect(hyphens.body).toEqual(underscores.body);
      expect(underscores.body.data).toHaveLength(12);
    });

    it('requires a signed-in caller for a protected dataset, in the legacy body', async () => {
      for (const request of [
        t.http().get(results('expenses_grouped')),
        t.http().post(results('expenses_grouped')).send({}),
      ]) {
        const reply = await request;
        expect(reply.status).toBe(401);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        expect(reply.body).toEqual({ detail: expect.any(String) });
      }
    });

    it('refuses a bad token even on a public dataset, in the legacy body', async () => {
      const reply = await t
        .http()
        .get(results('expenses_by_month'))
        .auth('not-a-token', { type: 'bearer' });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ detail: expect.any(String) });
    });

    it('answers 400 with detail and message to a bad selection, on GET and POST', async () => {
      const get = await t
        .http()
        .get(results('expenses_grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .query({ group_by: 'no-such-option' });
      expect(get.status).toBe(400);
      expect(get.body).toEqual({ detail: expect.any(String), message: get.body.detail });
      const post = await t
        .http()
        .post(results('expenses_grouped'))
        .auth(t.token('erin'), { type: 'bearer' })
        .send({ group_by: 'no-such-option' });
      expect(post.status).toBe(400);
      expect(post.body).toEqual(get.body);
    });
  });

  describe('both layouts', () => {
    it('reach the same service method, on GET and POST, as JSON and as CSV', async () => {
      const reply = serviceCalls();
      const requests = [
        t.http().get(`${P}/datasets/expenses_by_month/results`),
        t.http().post(`${P}/datasets/expenses_by_month/results`).send({}),
        t.http().get(`${P}/datasets/expenses_by_month/results`).accept('text/csv'),
        t.http().get(`${L}/dataset/expenses_by_month`),
        t.http().post(`${L}/dataset/expenses_by_month`).send({}),
      ];
      for (const [index, request] of requests.entries()) {
        const answer = await request;
        expect(answer.status).toBe(200);
        expect(reply).toHaveBeenCalledTimes(index + 1);
      }
    });

    // Scopes are the service's to check (an anonymous caller reaches it); a bad token is the guard's.
    it('do not reach the service when the guard refuses a bad token', async () => {
      const reply = serviceCalls();
      for (const path of [
        `${P}/datasets/expenses_by_month/results`,
        `${L}/dataset/expenses_by_month`,
      ]) {
        const answer = await t.http().get(path).auth('not-a-token', { type: 'bearer' });
        expect(answer.status).toBe(401);
      }
      expect(reply).not.toHaveBeenCalled();
    });
  });
});
