import { Api, L, P } from './support/api';
import { TestServer, startServer } from './support/server';

/** Without Chromium: a warning at start-up, and PNG dashboards that say what is missing, not "try again". */
describe('a server without Chromium', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer({ CHROMIUM_PATH: '/nonexistent/chromium' });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it('warns at start-up, naming CHROMIUM_PATH', () => {
    const warning = t.server.logs.find(
      (line) => line.level === 'warn' && String(line.msg).includes('CHROMIUM_PATH'),
    );
    expect(warning?.msg).toContain('/nonexistent/chromium');
  });

  it('answers a PNG dashboard 503 renderer_unavailable without Retry-After, in each layout', async () => {
    for (const path of [
      `${P}/dashboards/expenses_dashboard/results`,
      `${L}/dashboard/expenses_dashboard`,
    ]) {
      const reply = await fetch(`${t.url}${path}`, {
        headers: { Authorization: `Bearer ${admin}` },
      });
      const body = (await reply.json()) as Record<string, unknown>;
      expect([path, reply.status]).toEqual([path, 503]);
      expect(reply.headers.get('retry-after')).toBeNull();
      // The current layout names the code; the legacy one has only `detail`.
      if (path.startsWith(P)) expect(body.error).toBe('renderer_unavailable');
      expect(body.message ?? body.detail).toContain('CHROMIUM_PATH');
    }
  });

  it('stays ready, with the renderer degraded and saying what to install', async () => {
    const ready = await api.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks.renderer.status).toBe('degraded');
    expect(ready.body.checks.renderer.detail).toContain('CHROMIUM_PATH (/nonexistent/chromium)');
  });

  it('still serves HTML dashboards', async () => {
    const reply = await fetch(`${t.url}${P}/dashboards/expenses_report/results`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });
});
