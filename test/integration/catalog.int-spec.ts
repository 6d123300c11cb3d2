import { L, P } from '../support/api';
import { useApp } from './bootstrap';

const names = (entries: { name: string }[]) => entries.map((entry) => entry.name);

/**
 * The data catalog of both layouts, in process: what each caller sees, each layout's shape and errors, and
 * that both are answered by the one CatalogService.
 */
describe('data catalog', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /**
   * What the service decides for every catalog, in either layout: the items the caller may open. The current
   * layout's richer catalog (`catalog`) is built on it, the legacy one maps it as it is.
   */
  const openItemsCalls = () => t.spyOn('catalog/catalog.service', 'CatalogService', 'openItems');

  describe('current layout', () => {
    it('lists the public items to an anonymous caller, without the build detail', async () => {
      const reply = await t.http().get(`${P}/data-catalog`);
      expect(reply.status).toBe(200);
      expect(reply.headers['applied-username']).toBe('');
      expect(Object.keys(reply.body)).toEqual([
        'parameters',
        'datasets',
        'dashboards',
        'connections',
        'models',
        'lineage',
      ]);
      expect(names(reply.body.datasets)).toEqual(['expenses_by_month']);
      expect(names(reply.body.dashboards)).toEqual(['expenses_report']);
      expect(reply.body.datasets[0]).toMatchObject({
        parameters_path: `${P}/datasets/expenses_by_month/parameters`,
        result_path: `${P}/datasets/expenses_by_month/results`,
      });
      expect(reply.body.datasets[0].schema.fields.length).toBeGreaterThan(0);
      expect(reply.body).toMatchObject({ connections: [], models: [], lineage: [] });
    });

    it('adds protected items for a signed-in user and everything, with models, for an admin', async () => {
      const user = await t
        .http()
        .get(`${P}/data-catalog`)
        .auth(t.token('erin'), { type: 'bearer' });
      expect(user.status).toBe(200);
      expect(names(user.body.datasets)).toEqual(['expenses_by_month', 'expenses_grouped']);
      expect(user.body.models).toEqual([]);
      const full = await t
        .http()
        .get(`${P}/data-catalog`)
        .auth(t.token('admin'), { type: 'bearer' });
      expect(full.status).toBe(200);
      expect(names(full.body.datasets)).toEqual([
        'expenses_by_month',
        'expenses_grouped',
        'expense_transactions',
      ]);
      expect(full.body.models.length).toBeGreaterThan(0);
      expect(full.body.lineage.length).toBeGreaterThan(0);
    });

    it('refuses a bad token: 401 invalid_token', async () => {
      const reply = await t.http().get(`${P}/data-catalog`).auth('not-a-token', { type: 'bearer' });
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body).toEqual({
        statusCode: 401,
        error: 'invalid_token',
        message: expect.any(String),
      });
    });

    it('answers a body that does not parse with 400 invalid_request', async () => {
      const reply = await t
        .http()
        .get(`${P}/data-catalog`)
        .set('Content-Type', 'application/json')
        .send('{');
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message: 'The request body is not valid JSON',
      });
    });

    it('answers 404 not_found for another version of the project', async () => {
      const reply = await t.http().get('/api/service-v0/project/expenses/v2/data-catalog');
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({
        statusCode: 404,
        error: 'not_found',
        message: expect.any(String),
      });
    });
  });

  describe('legacy layout', () => {
    it('lists the public datasets and dashboards only, with legacy paths', async () => {
      const reply = await t.http().get(`${L}/data-catalog`);
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body)).toEqual(['datasets', 'dashboards']);
      expect(reply.body.datasets).toEqual([
        {
          name: 'expenses_by_month',
          label: expect.any(String),
          description: expect.any(String),
          parameters_path: `${L}/dataset/expenses_by_month/parameters`,
          result_path: `${L}/dataset/expenses_by_month`,
        },
      ]);
      expect(names(reply.body.dashboards)).toEqual(['expenses_report']);
      expect(reply.body.dashboards[0].result_format).toBe('html');
    });

    it('adds protected items for a signed-in user', async () => {
      const reply = await t
        .http()
        .get(`${L}/data-catalog`)
        .auth(t.token('erin'), { type: 'bearer' });
      expect(reply.status).toBe(200);
      expect(names(reply.body.datasets)).toEqual(['expenses_by_month', 'expenses_grouped']);
      expect(names(reply.body.dashboards)).toEqual(['expenses_dashboard', 'expenses_report']);
    });

    it('refuses a bad token: 401 in the legacy body', async () => {
      const reply = await t.http().get(`${L}/data-catalog`).auth('not-a-token', { type: 'bearer' });
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body).toEqual({ detail: expect.any(String) });
    });

    it('answers a body that does not parse with 400 detail and message', async () => {
      const reply = await t
        .http()
        .get(`${L}/data-catalog`)
        .set('Content-Type', 'application/json')
        .send('{');
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        detail: 'The request body is not valid JSON',
        message: 'The request body is not valid JSON',
      });
    });

    it('answers 404 with detail for another version of the project', async () => {
      const reply = await t.http().get('/service-v0/expenses/v2/data-catalog');
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ detail: expect.any(String) });
    });
  });

  describe('both layouts', () => {
    it('are answered by the same service, each request once', async () => {
      const calls = openItemsCalls();
      expect((await t.http().get(`${P}/data-catalog`)).status).toBe(200);
      expect(calls).toHaveBeenCalledTimes(1);
      expect((await t.http().get(`${L}/data-catalog`)).status).toBe(200);
      expect(calls).toHaveBeenCalledTimes(2);
    });

    it('do not reach the service when the guard refuses a bad token', async () => {
      const calls = openItemsCalls();
      for (const path of [`${P}/data-catalog`, `${L}/data-catalog`]) {
        const reply = await t.http().get(path).auth('not-a-token', { type: 'bearer' });
        expect(reply.status).toBe(401);
      }
      expect(calls).not.toHaveBeenCalled();
    });
  });
});
