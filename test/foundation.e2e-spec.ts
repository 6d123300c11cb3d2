import { request as httpRequest } from 'node:http';
import { http } from './support/http';
import { TestServer, startServer } from './support/server';

describe('foundation over HTTP (Postgres and Redis)', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers liveness', async () => {
    const response = await fetch(`${t.url}/health/live`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('keeps an idle connection for 65 s, past the proxies in front of it', async () => {
    // Node's default, 5 s, let a proxy reuse a connection just as the server closed it (a 502).
    const response = await fetch(`${t.url}/health/live`);
    expect(response.headers.get('keep-alive')).toBe('timeout=65');
  });

  it('reports readiness with the real servers it uses', async () => {
    const { status, body } = await http(`${t.url}/health/ready`);
    expect(status).toBe(200);
    expect(body.status).toBe('ready');
    expect(body.checks.database).toEqual({ status: 'up', kind: 'postgres' });
    expect(body.checks.queue).toEqual({ status: 'up', kind: 'redis' });
    expect(body.checks.project).toEqual({ status: 'up', kind: 'expenses' });
  });

  it('returns a request id, keeps a safe incoming one and replaces an unsafe one', async () => {
    const fresh = await fetch(`${t.url}/health/live`);
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await fetch(`${t.url}/health/live`, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await fetch(`${t.url}/health/live`, { headers: { 'X-Request-Id': 'a b"}' } });
    expect(unsafe.headers.get('x-request-id')).not.toContain('"');
  });

  it('writes one structured log line per request, without the token', async () => {
    const id = 'log-line-check-1';
    await fetch(`${t.url}/health/live?token=secret-in-query`, {
      headers: { 'X-Request-Id': id, Authorization: 'Bearer very-secret-token' },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = t.server.linesOf(id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      method: 'GET',
      path: '/health/live',
      status: 200,
    });
    expect(typeof lines[0].durationMs).toBe('number');
    expect(JSON.stringify(t.server.logs)).not.toContain('very-secret-token');
    expect(JSON.stringify(t.server.logs)).not.toContain('secret-in-query');
  });

  it('serves Swagger UI at /docs and the OpenAPI document at /docs-json', async () => {
    const ui = await fetch(`${t.url}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
    const { body: document } = await http(`${t.url}/docs-json`);
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/health/live', '/health/ready']),
    );
    expect(document.components.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
  });

  it('answers unknown paths 404 in the shape of their layout', async () => {
    const current = await fetch(`${t.url}/api/service-v0/project/nope/v1/whatever`);
    expect(current.status).toBe(404);
    expect(await current.json()).toEqual({
      statusCode: 404,
      error: 'not_found',
      message: 'No such resource',
    });
    const legacy = await fetch(`${t.url}/service-v0/nope/v1/whatever`);
    expect(legacy.status).toBe(404);
    expect(await legacy.json()).toEqual({ detail: 'No such resource' });
  });

  it('answers a body that is not JSON with 400 invalid_request, never 422 or 500', async () => {
    const response = await fetch(`${t.url}/health/live`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"broken":',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ statusCode: 400, error: 'invalid_request' });
  });

  it('answers a JSON body nested thousands of levels deep with 400, in both layouts', async () => {
    const P = '/api/service-v0/project/expenses/v1';
    const L = '/service-v0/expenses/v1';
    for (const depth of [33, 5_000, 200_000]) {
      const body = `{"min_filter":${'['.repeat(depth)}1${']'.repeat(depth)}}`;
      for (const path of [
        `${P}/datasets/expenses_by_month/results`,
        `${P}/datasets/expenses_by_month/parameters`,
        `${L}/dataset/expenses_by_month`,
      ]) {
        const reply = await http(`${t.url}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body,
        });
        expect({ depth, path, status: reply.status }).toEqual({ depth, path, status: 400 });
        const message = 'The request body nests deeper than 32 levels';
        expect(reply.body).toMatchObject(
          path.startsWith(L) ? { detail: message } : { error: 'invalid_request', message },
        );
      }
    }
    // Nesting within the limit is judged by the endpoint as usual.
    const shallow = await http(`${t.url}${P}/datasets/expenses_by_month/results`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"min_filter":${'['.repeat(31)}1${']'.repeat(31)}}`,
    });
    expect(shallow.status).toBe(400);
    expect(shallow.body.error).toBe('invalid_parameter_selection');
  });

  it('answers a body of a type the endpoint does not take with 415, in both layouts', async () => {
    const results = '/api/service-v0/project/expenses/v1/datasets/expenses_by_month/results';
    const plain = await http(`${t.url}${results}`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'min_filter=100',
    });
    expect(plain.status).toBe(415);
    expect(plain.body).toEqual({
      statusCode: 415,
      error: 'unsupported_media_type',
      message: 'This endpoint takes a body of type application/json, not text/plain',
    });
    const legacy = await http(`${t.url}/service-v0/expenses/v1/dataset/expenses_by_month`, {
      method: 'POST',
      body: new URLSearchParams({ min_filter: '100' }),
    });
    expect(legacy.status).toBe(415);
    expect(legacy.body.detail).toContain('application/json');
    // The login form is a form: JSON there is refused the same way.
    const login = await http(`${t.url}/api/service-v0/project/expenses/v1/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"username":"admin","password":"x"}',
    });
    expect(login.status).toBe(415);
    expect(login.body.message).toContain(
      'application/x-www-form-urlencoded or multipart/form-data',
    );
    // A JSON body with its charset, and a POST without a body, are taken.
    const json = await http(`${t.url}${results}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: '{"min_filter":100}',
    });
    expect(json.status).toBe(200);
    expect(json.body.total_num_rows).toBe(12);
    expect((await http(`${t.url}${results}`, { method: 'POST' })).status).toBe(200);
  });

  it('refuses a body over the size limit with 413', async () => {
    // The answer comes from the declared length, before the body is read, and the connection then closes:
    // a client still writing its 2 MB may meet EPIPE before it reads the answer (fetch did, now and then),
    // so the body is declared and never sent.
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${t.url}/health/live`,
        {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': String(2 * 1024 * 1024),
          },
        },
        (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => {
            request.destroy();
            resolve({ status: response.statusCode ?? 0, body });
          });
        },
      );
      request.on('error', reject);
      request.flushHeaders();
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: 'payload_too_large' });
  });
});
