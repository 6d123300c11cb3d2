import { L, P } from '../support/api';
import { currentError, legacyError, useApp } from './bootstrap';

/**
 * The dashboard controllers of both layouts, in process: who may open a dashboard (its scope decides, so
 * an anonymous caller reaches the service and a bad token does not), each layout's answer to a bad
 * selection, and that both layouts, GET or POST, are answered by the one DashboardsService. Only the HTML
 * dashboard is rendered here: the PNG one needs Chromium, which the e2e tier has.
 */
describe('dashboards', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /** The service call every dashboard request ends in (today's name; the one place to adjust). */
  const renderCalls = () => t.spyOn('dashboards/dashboards.service', 'DashboardsService', 'render');

  describe('current layout', () => {
    const results = (dashboard: string) => `${P}/dashboards/${dashboard}/results`;

    it('answers a public HTML dashboard to an anonymous caller, on GET and POST', async () => {
      const get = await t.http().get(results('expenses_report')).query({ end_date: '2024-06-30' });
      expect(get.status).toBe(200);
      expect(get.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(get.text).toMatch(/^<!DOCTYPE html>/i);
      const post = await t.http().post(results('expenses_report')).send({ end_date: '2024-06-30' });
      expect(post.status).toBe(200);
      expect(post.text).toBe(get.text);
    });

    it('requires a signed-in caller for a protected dashboard: 401 authentication_required', async () => {
      for (const request of [
        t.http().get(results('expenses_dashboard')),
        t.http().post(results('expenses_dashboard')).send({}),
      ]) {
        const reply = await request;
        expect(reply.status).toBe(401);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        expect(reply.body).toEqual(currentError(401, 'authentication_required'));
      }
    });

    it('refuses a bad token even on a public dashboard: 401 invalid_token', async () => {
      const reply = await t
        .http()
        .get(results('expenses_report'))
        .auth('not-a-token', { type: 'bearer' });
      expect([reply.status, reply.body]).toEqual([401, currentError(401, 'invalid_token')]);
    });

    it('answers a bad selection with 400 in the current shape, on GET and POST', async () => {
      const get = await t.http().get(results('expenses_report')).query({ end_date: 'not a date' });
      expect([get.status, get.body]).toEqual([
        400,
        currentError(400, 'invalid_parameter_selection'),
      ]);
      const post = await t.http().post(results('expenses_report')).send({ end_date: 'not a date' });
      expect([post.status, post.body]).toEqual([400, get.body]);
      const builtin = await t
        .http()
        .post(results('expenses_report'))
        .send({ x_verify_params: 'yes' });
      expect([builtin.status, builtin.body]).toEqual([
        400,
        currentError(400, 'invalid_request', expect.stringContaining('x_verify_params')),
      ]);
    });

    it('answers 404 not_found for a dashboard the project does not have', async () => {
      const reply = await t.http().get(results('no_such_dashboard'));
      expect([reply.status, reply.body]).toEqual([404, currentError(404, 'not_found')]);
    });
  });

  describe('legacy layout', () => {
    const results = (dashboard: string) => `${L}/dashboard/${dashboard}`;

    it('answers a public HTML dashboard, with hyphens for underscores, on GET and POST', async () => {
      const underscores = await t.http().get(results('expenses_report'));
      expect(underscores.status).toBe(200);
      expect(underscores.headers['content-type']).toBe('text/html; charset=utf-8');
      const hyphens = await t.http().get(results('expenses-report'));
      expect(hyphens.status).toBe(200);
      expect(hyphens.text).toBe(underscores.text);
      const post = await t
        .http()
        .post(results('expenses-report'))
        .send({ 'end-date': '2024-12-31' });
      expect(post.status).toBe(200);
    });

    it('requires a signed-in caller for a protected dashboard, in the legacy body', async () => {
      for (const request of [
        t.http().get(results('expenses-dashboard')),
        t.http().post(results('expenses-dashboard')).send({}),
      ]) {
        const reply = await request;
        expect(reply.status).toBe(401);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        expect(reply.body).toEqual(legacyError(401));
      }
      const bad = await t
        .http()
        .get(results('expenses-report'))
        .auth('not-a-token', { type: 'bearer' });
      expect([bad.status, bad.body]).toEqual([401, legacyError(401)]);
    });

    it('answers a bad selection with 400 detail and message, on GET and POST', async () => {
      const get = await t
        .http()
        .get(results('expenses-report'))
        .query({ 'end-date': 'not a date' });
      expect(get.status).toBe(400);
      expect(get.body).toEqual(legacyError(400, get.body.detail));
      expect(get.body.detail).toEqual(expect.any(String));
      const post = await t.http().post(results('expenses-report')).send({ end_date: 'not a date' });
      expect([post.status, post.body]).toEqual([400, get.body]);
    });

    it('answers 404 with detail for a dashboard the project does not have', async () => {
      const reply = await t.http().get(results('no-such-dashboard'));
      expect([reply.status, reply.body]).toEqual([404, legacyError(404)]);
    });
  });

  describe('both layouts', () => {
    it('reach the same service method, on GET and POST', async () => {
      const render = renderCalls();
      const requests = [
        () => t.http().get(`${P}/dashboards/expenses_report/results`),
        () => t.http().post(`${P}/dashboards/expenses_report/results`).send({}),
        () => t.http().get(`${L}/dashboard/expenses-report`),
        () => t.http().post(`${L}/dashboard/expenses-report`).send({}),
      ];
      for (const [index, request] of requests.entries()) {
        expect((await request()).status).toBe(200);
        expect(render).toHaveBeenCalledTimes(index + 1);
        // The caller, the name, the selections; a GET also passes its If-None-Match (none here).
        expect(render.mock.lastCall?.slice(0, 3)).toEqual([
          expect.objectContaining({ username: null }),
          'expenses_report',
          expect.anything(),
        ]);
        expect(render.mock.lastCall?.[3]).toBeUndefined();
      }
    });

    it('do not reach the service when the guard refuses a bad token', async () => {
      const render = renderCalls();
      for (const path of [
        `${P}/dashboards/expenses_report/results`,
        `${L}/dashboard/expenses-report`,
      ]) {
        const reply = await t.http().get(path).auth('not-a-token', { type: 'bearer' });
        expect(reply.status).toBe(401);
      }
      expect(render).not.toHaveBeenCalled();
    });

    it('take a signed-in caller to the service as that user', async () => {
      const render = renderCalls();
      for (const path of [
        `${P}/dashboards/expenses_report/results`,
        `${L}/dashboard/expenses-report`,
      ]) {
        const reply = await t.http().get(path).auth(t.token('erin'), { type: 'bearer' });
        expect(reply.status).toBe(200);
      }
      expect(
        render.mock.calls.map(([caller]) => (caller as { username: string }).username),
      ).toEqual(['erin', 'erin']);
    });
  });
});
