import { Client } from 'pg';
import { Api, P, decodeJwt } from './support/api';
import { TestServer, startServer } from './support/server';

describe('audit log', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it('records logins, failed ones too, with the client address and the request id', async () => {
    const failed = await api.request('POST', `${P}/login`, {
      form: { username: 'admin', password: 'wrong' },
      headers: { 'X-Request-Id': 'audit-failed-login' },
    });
    expect(failed.status).toBe(401);
    const page = await api.get(`${P}/audit?action=login&outcome=failure`, admin);
    expect(page.status).toBe(200);
    expect(page.body.events[0]).toMatchObject({
      actor: 'admin',
      action: 'login',
      outcome: 'failure',
      client_address: '127.0.0.1',
      request_id: 'audit-failed-login',
      details: { reason: 'invalid_credentials' },
    });
    const ok = await api.get(`${P}/audit?action=login&outcome=success&actor=admin`, admin);
    expect(ok.body.events.length).toBeGreaterThanOrEqual(1);
    expect(ok.body.events[0].at).toMatch(/Z$/);
  });

  it('records token creation and revocation, and user changes, without passwords', async () => {
    const created = await api.request('POST', `${P}/tokens`, {
      token: admin,
      json: { title: 'audited' },
    });
    const id = decodeJwt(created.body.access_token).jti as string;
    await api.request('DELETE', `${P}/tokens/${id}`, { token: admin });
    await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'audited_user', password: 'secret-pw-1' },
    });
    await api.request('PUT', `${P}/users/audited_user`, {
      token: admin,
      json: { role: 'manager' },
    });
    await api.request('DELETE', `${P}/users/audited_user`, { token: admin });
    const page = await api.get(`${P}/audit?actor=admin&limit=20`, admin);
    const actions = page.body.events.map(
      (e: { action: string; target: string }) => `${e.action}:${e.target}`,
    );
    expect(actions).toEqual(
      expect.arrayContaining([
        `token.create:${id}`,
        `token.revoke:${id}`,
        'user.create:audited_user',
        'user.update:audited_user',
        'user.delete:audited_user',
      ]),
    );
    expect(page.text).not.toContain('secret-pw-1');
  });

  it('pages with limit and offset', async () => {
    const first = await api.get(`${P}/audit?limit=2`, admin);
    expect(first.body.events).toHaveLength(2);
    expect(first.body.next_offset).toBe(2);
    const second = await api.get(`${P}/audit?limit=2&offset=2`, admin);
    expect(second.body.events[0].id).toBeLessThan(first.body.events[1].id);
    expect((await api.get(`${P}/audit?limit=0`, admin)).status).toBe(400);
    // An empty value is no integer (it was read as 0).
    expect((await api.get(`${P}/audit?offset=`, admin)).status).toBe(400);
    expect((await api.get(`${P}/audit?limit=%20`, admin)).status).toBe(400);
    expect((await api.get(`${P}/audit?since=yesterday`, admin)).body.error).toBe('invalid_request');
  });

  it('is for administrators only', async () => {
    const user = await api.userToken(admin, 'not_admin');
    expect((await api.get(`${P}/audit`, user)).status).toBe(403);
    expect((await api.get(`${P}/audit`)).status).toBe(401);
  });

  it('cannot be changed or deleted, even with direct database access', async () => {
    const client = new Client({ connectionString: t.env.DATABASE_URL });
    await client.connect();
    try {
      await expect(client.query(`UPDATE audit_events SET actor = 'x'`)).rejects.toThrow(
        'append-only',
      );
      await expect(client.query(`DELETE FROM audit_events`)).rejects.toThrow('append-only');
    } finally {
      await client.end();
    }
  });
});

describe('metrics', () => {
  it('serves Prometheus metrics to administrators, per route template and status', async () => {
    const t = await startServer();
    try {
      const api = new Api(t.url);
      expect((await api.get('/metrics')).status).toBe(401);
      const admin = await api.adminToken();
      await api.get(`${P}/me`, admin);
      const reply = await api.get('/metrics', admin);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toContain('text/plain');
      expect(reply.text).toContain(
        'drey_http_requests_total{method="GET",route="/api/service-v0/project/:project/:version/me",status="200"} 1',
      );
      expect(reply.text).toContain('drey_http_request_duration_seconds_bucket');
      expect(reply.text).toMatch(/drey_db_pool_connections\{state="total"\} \d+/);
      expect(reply.text).toContain('drey_build_queue_busy 0');
      expect(reply.text).toContain('drey_build_duration_seconds_count{status="succeeded"} 1');
      expect(reply.text).toContain('drey_process_resident_memory_bytes');
      const user = await api.userToken(admin, 'viewer');
      expect((await api.get('/metrics', user)).status).toBe(403);
    } finally {
      await t.close();
    }
  });

  it('is public when METRICS_PUBLIC=true', async () => {
    const t = await startServer({ METRICS_PUBLIC: 'true' });
    try {
      expect((await new Api(t.url).get('/metrics')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
