import { Api, L, P } from './support/api';
import { TestServer, startServer } from './support/server';

/**
 * What a new user meets first: the bare address, the first log line, and the errors of a mistyped name
 * or option. Each message names what the caller may use instead, and nothing they may not see.
 */
describe('the edges a new user meets', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let employee: string;
  let manager: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    employee = await api.userToken(admin, 'edna', { role: 'employee' });
    manager = await api.userToken(admin, 'mark', { role: 'manager' });
  }, 90000);

  afterAll(() => t.close());

  describe('GET /', () => {
    it('redirects to Swagger UI with a 302, for GET and HEAD, without a token', async () => {
      for (const method of ['GET', 'HEAD']) {
        const reply = await fetch(`${t.url}/`, { method, redirect: 'manual' });
        expect({ method, status: reply.status, location: reply.headers.get('location') }).toEqual({
          method,
          status: 302,
          location: '/docs',
        });
      }
      // Followed as a browser does, it lands on the docs page.
      const followed = await fetch(`${t.url}/`);
      expect(followed.status).toBe(200);
      expect(followed.url).toMatch(/\/docs\/?$/);
      expect(await followed.text()).toContain('swagger-ui');
    });

    it('is not an operation of the API document, and other methods are 405', async () => {
      const document = (await api.get('/docs-json')).body as { paths: Record<string, unknown> };
      expect(Object.keys(document.paths)).not.toContain('/');
      const post = await api.request('POST', '/');
      expect(post.status).toBe(405);
      expect(post.body.error).toBe('method_not_allowed');
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    });
  });

  it('says "starting" first, with its version, project folder and pid, before anything slow', () => {
    const logs = t.server.logs;
    expect(logs[0]).toMatchObject({
      level: 'info',
      msg: 'starting',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      projectDir: t.env.PROJECT_DIR,
      pid: t.server.child.pid,
    });
    expect(logs.findIndex((line) => line.msg === 'listening')).toBeGreaterThan(0);
  });

  describe('a parameter option', () => {
    const grouped = `${P}/datasets/expenses_grouped/parameters`;

    it('restricted by user_groups is "not available to you", with the options the caller may choose', async () => {
      const reply = await api.get(`${grouped}?group_by=trans`, employee);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({
        error: 'invalid_parameter_selection',
        message:
          'Parameter "group_by": option "trans" is not available to you; ' +
          'the options are "day", "month", "cat", "subcat"',
      });
      // The manager may choose it.
      expect((await api.get(`${grouped}?group_by=trans`, manager)).status).toBe(200);
    });

    it('unknown lists the valid ids, never the restricted ones the caller may not see', async () => {
      const asEmployee = await api.get(`${grouped}?group_by=week`, employee);
      expect(asEmployee.status).toBe(400);
      expect(asEmployee.body.message).toBe(
        'Parameter "group_by": option "week" does not exist; ' +
          'the options are "day", "month", "cat", "subcat"',
      );
      const asManager = await api.get(`${grouped}?group_by=week`, manager);
      expect(asManager.body.message).toContain('the options are "trans", "day"');
    });

    it('in the legacy layout: the same message in its own shape', async () => {
      const reply = await api.get(
        `${L}/dataset/expenses-grouped/parameters?group-by=trans`,
        employee,
      );
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ detail: reply.body.message, message: expect.any(String) });
      expect(reply.body.message).toContain('option "trans" is not available to you');
    });

    it('a long unknown id is echoed by its start only', async () => {
      const reply = await api.get(`${grouped}?group_by=${'z'.repeat(3000)}`, employee);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toContain('... (3000 characters) does not exist');
      expect(reply.text.length).toBeLessThan(600);
    });
  });

  describe('an unknown dataset or dashboard', () => {
    it('lists the items the caller may open: public ones to an anonymous caller', async () => {
      const reply = await api.get(`${P}/datasets/expenses_by_mnth/results`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({
        error: 'not_found',
        message:
          'No dataset named "expenses_by_mnth"; the datasets you can open are "expenses_by_month"',
      });
      const dashboard = await api.get(`${P}/dashboards/expenses_reprt/results`);
      expect(dashboard.status).toBe(404);
      expect(dashboard.body.message).toBe(
        'No dashboard named "expenses_reprt"; the dashboards you can open are "expenses_report"',
      );
    });

    it('never names a private item to a user who may not open it; an administrator sees all', async () => {
      const asEmployee = await api.get(`${P}/datasets/nope/parameters`, employee);
      expect(asEmployee.status).toBe(404);
      expect(asEmployee.body.message).toBe(
        'No dataset named "nope"; the datasets you can open are "expenses_by_month", "expenses_grouped"',
      );
      expect(asEmployee.text).not.toContain('expense_transactions');
      const asAdmin = await api.get(`${P}/datasets/nope/parameters`, admin);
      expect(asAdmin.body.message).toContain('"expense_transactions"');
    });

    it('in the legacy layout: the same message in its own shape', async () => {
      const reply = await api.get(`${L}/dataset/nope`);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({
        detail: 'No dataset named "nope"; the datasets you can open are "expenses_by_month"',
      });
    });
  });
});
