import type * as FastRoutesFile from '@/http/fast-route/fast-routes';
import { L, P } from '../support/api';
import { MCP_INITIALIZE } from '../support/mcp-requests';
import { fromDist, useApp } from './bootstrap';

/** A dataset result, served by the fast route (`@FastRoute()`). */
const FAST = `${P}/datasets/expenses_by_month/results`;

/**
 * Every kind of route the service has, as a page that DNS rebinding pointed at 127.0.0.1 would call it: the
 * current and legacy layouts, the fast route, health, docs, metrics, MCP, an unknown path, a login form.
 */
const ROUTES: {
  name: string;
  method: 'get' | 'post';
  path: string;
  body?: object;
  form?: string;
}[] = [
  { name: 'current layout', method: 'get', path: P },
  { name: 'legacy layout', method: 'get', path: `${L}/data-catalog` },
  { name: 'fast route', method: 'get', path: FAST },
  { name: 'health', method: 'get', path: '/health/ready' },
  { name: 'docs', method: 'get', path: '/docs' },
  { name: 'docs document', method: 'get', path: '/docs-json' },
  { name: 'metrics', method: 'get', path: '/metrics' },
  { name: 'MCP', method: 'post', path: `${P}/mcp`, body: MCP_INITIALIZE },
  { name: 'unknown path', method: 'get', path: '/nothing-here' },
  { name: 'login', method: 'post', path: `${P}/login`, form: 'username=admin&password=x' },
];

describe('the Host rule of a service bound to loopback', () => {
  const t = useApp({ env: { HOST: '127.0.0.1', ALLOWED_HOSTS: 'drey.internal' } });

  function send(route: (typeof ROUTES)[number], host: string) {
    let call = t.http()[route.method](route.path).set('Host', host);
    if (route.path.endsWith('/mcp'))
      call = call.set('Accept', 'application/json, text/event-stream');
    if (route.body) return call.send(route.body);
    if (route.form) return call.type('form').send(route.form);
    return call;
  }

  it.each(ROUTES)(
    'refuses another name on the $name route with 403 in its layout, and logs the Host',
    async (route) => {
      const reply = await send(route, 'evil.example:4465');
      expect(reply.status).toBe(403);
      const message = expect.stringContaining('answers the Host names localhost, 127.0.0.1, [::1]');
      expect(reply.body).toEqual(
        route.path.startsWith(L)
          ? { detail: message }
          : { statusCode: 403, error: 'forbidden', message },
      );
      const id = reply.headers['x-request-id'];
      expect(t.logs.filter((line) => line.requestId === id)).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: 'host refused',
          host: 'evil.example:4465',
        }),
        expect.objectContaining({ msg: 'request', status: 403 }),
      ]);
    },
  );

  it.each(ROUTES)(
    'answers the $name route under each loopback name and ALLOWED_HOSTS',
    async (route) => {
      for (const host of ['localhost:4465', '127.0.0.1:1', '[::1]:54321', 'DREY.internal:8080']) {
        const reply = await send(route, host);
        expect([host, reply.status]).not.toEqual([host, 403]);
      }
    },
  );

  it('serves an allowed name on the fast route, and leaves a refused one to Express', async () => {
    const { FastRoutes } = fromDist<typeof FastRoutesFile>('http/fast-route/fast-routes');
    // The fast route's one entry point (private: there is no other way to see which path served a request).
    const fast = jest.spyOn(t.app.get<{ answer(): unknown }>(FastRoutes), 'answer');
    expect((await t.http().get(FAST).set('Host', 'localhost:4465')).status).toBe(200);
    expect(fast).toHaveBeenCalledTimes(1);
    expect((await t.http().get(FAST).set('Host', 'evil.example')).status).toBe(403);
    expect(fast).toHaveBeenCalledTimes(1);
  });

  it('refuses a CORS preflight and a request without a usable Host', async () => {
    const preflight = await t
      .http()
      .options(P)
      .set('Host', 'evil.example')
      .set('Origin', 'http://evil.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(403);
    for (const host of ['evil.example@127.0.0.1', 'localhost.', '127.0.0.1.nip.io']) {
      expect([host, (await t.http().get(P).set('Host', host)).status]).toEqual([host, 403]);
    }
  });
});

describe('the Host rule of a service bound to all addresses', () => {
  const t = useApp({ env: { HOST: '0.0.0.0' } });

  it('is off: a load balancer in front decides which names reach the service', async () => {
    for (const path of [P, FAST, '/health/ready', `${L}/data-catalog`]) {
      const reply = await t.http().get(path).set('Host', 'drey.example.com');
      expect([path, reply.status]).toEqual([path, 200]);
    }
    expect(t.logs.some((line) => line.msg === 'host refused')).toBe(false);
  });
});
