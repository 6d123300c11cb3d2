import { P } from '../support/api';
import { currentError, useApp } from './bootstrap';

/**
 * The controllers outside the data endpoints, in process: the project's description
 * (`ProjectInfoController`, open, but a token that is sent must be valid), the health checks
 * (`HealthController`) and the documentation pages (`RedocController`, `RootController`), which look at no
 * token at all. None takes input beyond the query string, whose limits hold here too.
 */
describe('project, health and documentation pages', () => {
  const t = useApp();

  /** A query string one parameter past the input limits (1000 parameters). */
  const tooManyParameters = Array.from({ length: 1001 }, (_, i) => `k${i}=1`).join('&');

  describe('the project', () => {
    it('describes the project and the service to anyone', async () => {
      const reply = await t.http().get(P);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        name: 'expenses',
        version: 'v1',
        label: 'Expenses',
        description: expect.any(String),
        service_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      });
    });

    it('refuses a bad token: 401 invalid_token', async () => {
      const reply = await t.http().get(P).auth('not-a-token', { type: 'bearer' });
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body).toEqual(currentError(401, 'invalid_token'));
    });

    it('answers a query string past the limits with 400 invalid_request', async () => {
      const reply = await t.http().get(`${P}?${tooManyParameters}`);
      expect([reply.status, reply.body]).toEqual([
        400,
        currentError(400, 'invalid_request', expect.stringContaining('more than 1000 parameters')),
      ]);
    });
  });

  describe('health', () => {
    it('answers live and ready without a token, and does not look at one', async () => {
      const readiness = t.spyOn('health/health.service', 'HealthService', 'readiness');
      for (const token of [undefined, 'not-a-token']) {
        const live = t.http().get('/health/live');
        const ready = t.http().get('/health/ready');
        const [liveReply, readyReply] = await Promise.all(
          token
            ? [live.auth(token, { type: 'bearer' }), ready.auth(token, { type: 'bearer' })]
            : [live, ready],
        );
        expect([liveReply.status, liveReply.body]).toEqual([200, { status: 'ok' }]);
        expect(readyReply.status).toBe(200);
        expect(readyReply.body).toMatchObject({ status: 'ready' });
      }
      expect(readiness).toHaveBeenCalledTimes(2);
    });

    it('answers a query string past the limits with 400 invalid_request', async () => {
      const readiness = t.spyOn('health/health.service', 'HealthService', 'readiness');
      for (const path of ['/health/live', '/health/ready']) {
        const reply = await t.http().get(`${path}?${tooManyParameters}`);
        expect([path, reply.status, reply.body]).toEqual([
          path,
          400,
          currentError(
            400,
            'invalid_request',
            expect.stringContaining('more than 1000 parameters'),
          ),
        ]);
      }
      expect(readiness).not.toHaveBeenCalled();
    });
  });

  describe('documentation pages', () => {
    it('redirect / to Swagger UI with a 302, a bad token or not', async () => {
      for (const token of [undefined, 'not-a-token']) {
        const request = t.http().get('/').redirects(0);
        const reply = await (token ? request.auth(token, { type: 'bearer' }) : request);
        expect([reply.status, reply.headers.location]).toEqual([302, '/docs']);
      }
    });

    it("serve ReDoc at /redoc and P/redoc, each drawing its own base's document, and its script", async () => {
      for (const [page, base] of [
        ['/redoc', ''],
        [`${P}/redoc`, P],
      ]) {
        const reply = await t.http().get(page).auth('not-a-token', { type: 'bearer' });
        expect([page, reply.status]).toEqual([page, 200]);
        expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(reply.text).toContain('Drey: Expenses');
        expect(reply.text).toContain(`${base}/docs-json`);
      }
      const script = await t.http().get('/redoc/redoc.standalone.js');
      expect(script.status).toBe(200);
      expect(script.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(script.text.length).toBeGreaterThan(100_000);
    });

    it('answer a query string past the limits with 400 invalid_request', async () => {
      for (const path of ['/', '/redoc']) {
        const reply = await t.http().get(`${path}?${tooManyParameters}`).redirects(0);
        expect([path, reply.status, reply.body.error]).toEqual([path, 400, 'invalid_request']);
      }
    });
  });
});
