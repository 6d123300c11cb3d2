import type * as FastRoutesFile from '@/http/fast-route/fast-routes';
import type * as SecurityHeadersFile from '@/http/security-headers';
import { L, P } from '../support/api';
import { fromDist, useApp } from './bootstrap';

/** The policy of everything that is not a page: nothing loads, nothing runs, nothing frames it. */
const API_POLICY = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";

/** What each kind of page may load (the browser tests check that this is enough). */
const PAGE_POLICIES = {
  swaggerUi:
    "default-src 'none';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;" +
    "connect-src 'self';base-uri 'none';form-action 'none';frame-ancestors 'none'",
  redoc:
    "default-src 'none';script-src 'self';style-src 'unsafe-inline';img-src 'self' data:;worker-src blob:;" +
    "connect-src 'self';base-uri 'none';form-action 'none';frame-ancestors 'none'",
  dashboard:
    "default-src 'none';script-src 'unsafe-inline';style-src 'unsafe-inline';img-src data:;" +
    "font-src data:;base-uri 'none';form-action 'none';frame-ancestors 'none'",
};

/**
 * helmet's headers on every kind of response of the real application: a dataset result served by the fast
 * route and the same result through Express, errors of both paths and of a page's route, Swagger UI, ReDoc
 * and an HTML dashboard (each with its own policy, which errors do not keep).
 */
describe('security headers', () => {
  const t = useApp();
  const headers = fromDist<typeof SecurityHeadersFile>('http/security-headers').SECURITY_HEADERS;

  /** Every security header but the policy, as helmet set them, and the policy apart. */
  function expectSecurityHeaders(
    reply: { headers: Record<string, string> },
    policy = API_POLICY,
  ): void {
    for (const [name, value] of headers) {
      if (name !== 'Content-Security-Policy')
        expect([name, reply.headers[name.toLowerCase()]]).toEqual([name, value]);
    }
    expect(reply.headers['content-security-policy']).toBe(policy);
  }

  it('are helmet’s, with frames refused and the API policy', () => {
    const byName = new Map(headers.map(([name, value]) => [name.toLowerCase(), value]));
    expect(byName.get('content-security-policy')).toBe(API_POLICY);
    expect(byName.get('x-frame-options')).toBe('DENY');
    expect(byName.get('x-content-type-options')).toBe('nosniff');
    expect(byName.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(byName.get('referrer-policy')).toBe('no-referrer');
    expect(byName.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(byName.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  it('are on a JSON result served by the fast route, and on the same result through Express', async () => {
    const { FastRoutes } = fromDist<typeof FastRoutesFile>('http/fast-route/fast-routes');
    // The fast route's one entry point (private: there is no other way to see which path served a request).
    const fast = jest.spyOn(t.app.get<{ answer(): unknown }>(FastRoutes), 'answer');
    const results = `${P}/datasets/expenses_by_month/results`;

    const get = await t.http().get(results).query({ x_limit: '2' });
    expect(get.status).toBe(200);
    expect(get.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(fast).toHaveBeenCalledTimes(1);
    expectSecurityHeaders(get);

    const post = await t.http().post(results).send({ x_limit: 2 });
    expect(post.status).toBe(200);
    expect(fast).toHaveBeenCalledTimes(1);
    expectSecurityHeaders(post);

    const legacy = await t.http().get(`${L}/dataset/expenses-by-month`);
    expect(legacy.status).toBe(200);
    expect(fast).toHaveBeenCalledTimes(2);
    expectSecurityHeaders(legacy);
  });

  it('are on errors: of the fast route, of Express, of a route that does not exist, of a body', async () => {
    const { FastRoutes } = fromDist<typeof FastRoutesFile>('http/fast-route/fast-routes');
    const fast = jest.spyOn(t.app.get<{ answer(): unknown }>(FastRoutes), 'answer');

    const unauthorised = await t.http().get(`${P}/datasets/expenses_grouped/results`);
    expect(unauthorised.status).toBe(401);
    expect(fast).toHaveBeenCalledTimes(1);
    expectSecurityHeaders(unauthorised);

    const badSelection = await t
      .http()
      .get(`${P}/datasets/expenses_by_month/results`)
      .query({ start_date: 'not a date' });
    expect(badSelection.status).toBe(400);
    expect(fast).toHaveBeenCalledTimes(2);
    expectSecurityHeaders(badSelection);

    const unknown = await t.http().get(`${P}/no-such-thing`);
    expect(unknown.status).toBe(404);
    expectSecurityHeaders(unknown);

    // A method the path does not have (405), in the legacy layout.
    const unknownLegacy = await t.http().delete(`${L}/dataset/expenses-by-month`);
    expect(unknownLegacy.status).toBe(405);
    expectSecurityHeaders(unknownLegacy);

    // Refused by the JSON parser, before any route.
    const badBody = await t
      .http()
      .post(`${P}/datasets/expenses_by_month/results`)
      .set('Content-Type', 'application/json')
      .send('{"x_limit": ');
    expect(badBody.status).toBe(400);
    expectSecurityHeaders(badBody);
  });

  it('give Swagger UI its policy, on its pages and files, and the document the API’s', async () => {
    for (const page of ['/docs', `${P}/docs`]) {
      const reply = await t.http().get(page);
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expectSecurityHeaders(reply, PAGE_POLICIES.swaggerUi);
      const init = await t.http().get(`${page}/swagger-ui-init.js`);
      expect(init.status).toBe(200);
      expectSecurityHeaders(init, PAGE_POLICIES.swaggerUi);
    }
    for (const document of ['/docs-json', `${P}/docs-json`]) {
      const reply = await t.http().get(document);
      expect(reply.status).toBe(200);
      expectSecurityHeaders(reply);
    }
  });

  it('give ReDoc its policy', async () => {
    for (const page of ['/redoc', `${P}/redoc`]) {
      const reply = await t.http().get(page);
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expectSecurityHeaders(reply, PAGE_POLICIES.redoc);
    }
  });

  it('give an HTML dashboard its policy, and its errors the API’s', async () => {
    const results = `${P}/dashboards/expenses_report/results`;
    const page = await t.http().get(results);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(page, PAGE_POLICIES.dashboard);
    // The page's <meta> says the same but for frame-ancestors, which a <meta> cannot say.
    expect(page.text).toContain(
      `<meta http-equiv="Content-Security-Policy" content="${PAGE_POLICIES.dashboard
        .replace(";frame-ancestors 'none'", '')
        .replaceAll("'", '&#39;')}">`,
    );

    // Past the guards, where the route has set the page's headers: the error is not the page.
    const bad = await t.http().get(results).query({ start_date: 'not a date' });
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toBe('application/json; charset=utf-8');
    expectSecurityHeaders(bad);
  });
});
