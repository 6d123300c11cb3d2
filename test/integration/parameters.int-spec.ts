import { L, P } from '../support/api';
import { currentError, legacyError, useApp } from './bootstrap';

const names = (body: { parameters: { name: string }[] }) => body.parameters.map((p) => p.name);

/**
 * The parameters controllers of both layouts, in process: the project's parameters (signed-in callers
 * only), a dataset's and a dashboard's (their scope decides), each layout's answer to a bad selection, and
 * that both layouts, GET or POST, are answered by the one ParameterWidgetsService.
 */
describe('parameters', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /** The service calls the parameters requests end in (today's names; the one place to adjust). */
  const itemCalls = () =>
    t.spyOn('parameter-widgets/parameter-widgets.service', 'ParameterWidgetsService', 'ofItem');
  const projectCalls = () =>
    t.spyOn('parameter-widgets/parameter-widgets.service', 'ParameterWidgetsService', 'ofProject');

  describe('current layout', () => {
    it("requires a token for the project's parameters: 401, then every parameter for a signed-in user", async () => {
      const ofProject = projectCalls();
      for (const request of [
        t.http().get(`${P}/parameters`),
        t.http().post(`${P}/parameters`).send({}),
      ]) {
        const reply = await request;
        expect(reply.status).toBe(401);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        expect(reply.body).toEqual(currentError(401, 'authentication_required'));
      }
      expect(ofProject).not.toHaveBeenCalled();
      const get = await t.http().get(`${P}/parameters`).auth(t.token('erin'), { type: 'bearer' });
      expect(get.status).toBe(200);
      expect(names(get.body)).toEqual(
        expect.arrayContaining(['group_by', 'start_date', 'category']),
      );
      const post = await t
        .http()
        .post(`${P}/parameters`)
        .auth(t.token('erin'), { type: 'bearer' })
        .send({});
      expect([post.status, post.body]).toEqual([200, get.body]);
      expect(ofProject).toHaveBeenCalledTimes(2);
    });

    it("applies an item's scope: public to anyone, protected 401, private 403 to a non-admin", async () => {
      const item = (kind: string, name: string) => `${P}/${kind}/${name}/parameters`;
      const open = await t.http().get(item('datasets', 'expenses_by_month'));
      expect(open.status).toBe(200);
      expect(names(open.body)).toEqual(['start_date', 'end_date', 'min_filter', 'max_filter']);
      expect((await t.http().get(item('dashboards', 'expenses_report'))).status).toBe(200);
      for (const path of [
        item('datasets', 'expenses_grouped'),
        item('dashboards', 'expenses_dashboard'),
      ]) {
        const reply = await t.http().post(path).send({});
        expect([path, reply.status, reply.body]).toEqual([
          path,
          401,
          currentError(401, 'authentication_required'),
        ]);
      }
      const private_ = await t
        .http()
        .get(item('datasets', 'expense_transactions'))
        .auth(t.token('erin'), { type: 'bearer' });
      expect([private_.status, private_.body]).toEqual([403, currentError(403, 'forbidden')]);
      const bad = await t
        .http()
        .get(item('datasets', 'expenses_by_month'))
        .auth('not-a-token', { type: 'bearer' });
      expect([bad.status, bad.body]).toEqual([401, currentError(401, 'invalid_token')]);
    });

    it('answers a bad selection with 400 invalid_parameter_selection, on GET and POST', async () => {
      const path = `${P}/dashboards/expenses_report/parameters`;
      const get = await t.http().get(path).query({ start_date: 'not a date' });
      expect([get.status, get.body]).toEqual([
        400,
        currentError(400, 'invalid_parameter_selection', expect.stringContaining('start_date')),
      ]);
      const post = await t.http().post(path).send({ start_date: 'not a date' });
      expect([post.status, post.body]).toEqual([400, get.body]);
      const project = await t
        .http()
        .get(`${P}/parameters`)
        .query({ group_by: 'nope' })
        .auth(t.token('erin'), { type: 'bearer' });
      expect([project.status, project.body]).toEqual([
        400,
        currentError(400, 'invalid_parameter_selection', expect.stringContaining('group_by')),
      ]);
    });
  });

  describe('legacy layout', () => {
    it('answers a public item, with hyphens for underscores, and without descriptions', async () => {
      const reply = await t.http().get(`${L}/dataset/expenses-by-month/parameters`);
      expect(reply.status).toBe(200);
      expect(names(reply.body)).toEqual(['start_date', 'end_date', 'min_filter', 'max_filter']);
      expect(reply.body.parameters.every((p: object) => !('description' in p))).toBe(true);
      const dashboard = await t.http().post(`${L}/dashboard/expenses-report/parameters`).send({});
      expect(dashboard.status).toBe(200);
    });

    it("applies an item's scope in the legacy body: 401 and 403", async () => {
      for (const path of [
        `${L}/dataset/expenses-grouped/parameters`,
        `${L}/dashboard/expenses-dashboard/parameters`,
      ]) {
        const reply = await t.http().get(path);
        expect([path, reply.status, reply.body]).toEqual([path, 401, legacyError(401)]);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
      }
      const private_ = await t
        .http()
        .get(`${L}/dataset/expense-transactions/parameters`)
        .auth(t.token('erin'), { type: 'bearer' });
      expect([private_.status, private_.body]).toEqual([403, legacyError(403)]);
    });

    it('answers a bad selection, or more than one, with 400 detail and message', async () => {
      const path = `${L}/dashboard/expenses-report/parameters`;
      const bad = await t.http().get(path).query({ 'start-date': 'not a date' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual(legacyError(400, expect.stringContaining('start_date')));
      expect(bad.body.message).toBe(bad.body.detail);
      const two = await t
        .http()
        .post(path)
        .send({ start_date: '2024-01-01', end_date: '2024-02-01' });
      expect(two.status).toBe(400);
      expect(two.body).toEqual(legacyError(400, expect.stringMatching(/selection/i)));
    });
  });

  describe('both layouts', () => {
    it("reach the same service method for an item's parameters, on GET and POST", async () => {
      const ofItem = itemCalls();
      const requests = [
        () => t.http().get(`${P}/datasets/expenses_by_month/parameters`),
        () => t.http().post(`${P}/datasets/expenses_by_month/parameters`).send({}),
        () => t.http().get(`${L}/dataset/expenses-by-month/parameters`),
        () => t.http().post(`${L}/dataset/expenses-by-month/parameters`).send({}),
        () => t.http().get(`${P}/dashboards/expenses_report/parameters`),
        () => t.http().post(`${P}/dashboards/expenses_report/parameters`).send({}),
        () => t.http().get(`${L}/dashboard/expenses-report/parameters`),
        () => t.http().post(`${L}/dashboard/expenses-report/parameters`).send({}),
      ];
      for (const [index, request] of requests.entries()) {
        expect((await request()).status).toBe(200);
        expect(ofItem).toHaveBeenCalledTimes(index + 1);
      }
      expect(ofItem.mock.calls.map(([kind, name]) => `${String(kind)} ${String(name)}`)).toEqual([
        ...Array(4).fill('dataset expenses_by_month'),
        ...Array(4).fill('dashboard expenses_report'),
      ]);
    });

    it('do not reach the service when the guard refuses a bad token', async () => {
      const ofItem = itemCalls();
      for (const path of [
        `${P}/datasets/expenses_by_month/parameters`,
        `${L}/dataset/expenses-by-month/parameters`,
      ]) {
        const reply = await t.http().get(path).auth('not-a-token', { type: 'bearer' });
        expect(reply.status).toBe(401);
      }
      expect(ofItem).not.toHaveBeenCalled();
    });
  });
});
