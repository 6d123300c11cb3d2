import { L, P } from '../support/api';
import { ADMIN_PASSWORD } from '../support/server';
import { useApp } from './bootstrap';

const CURRENT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const LEGACY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

/**
 * The authentication controllers, in process: the login form of both layouts (current `P/login`, legacy
 * `L/token`), the caller's own endpoints (`me`, `tokens`, `change-password`) and the guard in front of them.
 */
describe('authentication', () => {
  // Wrong passwords are sent on purpose below: no lockout in between.
  const t = useApp({ env: { LOGIN_MAX_FAILURES: '1000', LOGIN_MAX_FAILURES_PER_ADDRESS: '1000' } });

  /** The service call both login forms end in (today's name; the one place to adjust). */
  const loginCalls = () => t.spyOn('auth/auth.service', 'AuthService', 'login');

  describe('login form', () => {
    it('answers the current layout with is_admin and a Z timestamp', async () => {
      const reply = await t
        .http()
        .post(`${P}/login`)
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD, grant_type: 'password' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        username: 'admin',
        is_admin: true,
        expiry_time: expect.stringMatching(CURRENT_TIME),
      });
    });

    it('answers the legacy layout without is_admin and with a +00:00 timestamp', async () => {
      const reply = await t
        .http()
        .post(`${L}/token`)
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        username: 'admin',
        expiry_time: expect.stringMatching(LEGACY_TIME),
      });
    });

    it('answers a wrong password with each layout’s 401', async () => {
      const current = await t
        .http()
        .post(`${P}/login`)
        .type('form')
        .send({ username: 'admin', password: 'wrong-password' });
      expect(current.status).toBe(401);
      expect(current.body).toEqual({
        statusCode: 401,
        error: 'invalid_credentials',
        message: 'Incorrect username or password',
      });
      const legacy = await t
        .http()
        .post(`${L}/token`)
        .type('form')
        .send({ username: 'admin', password: 'wrong-password' });
      expect(legacy.status).toBe(401);
      expect(legacy.body).toEqual({ detail: 'Incorrect username or password' });
    });

    it('answers a missing field with each layout’s 400', async () => {
      const current = await t.http().post(`${P}/login`).type('form').send({ username: 'admin' });
      expect(current.status).toBe(400);
      expect(current.body).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message: expect.stringContaining('password'),
      });
      const legacy = await t.http().post(`${L}/token`).type('form').send({ password: 'x' });
      expect(legacy.status).toBe(400);
      expect(legacy.body).toEqual({
        detail: expect.stringContaining('username'),
        message: legacy.body.detail,
      });
    });

    it('answers a grant_type other than password with 400 unsupported_grant_type', async () => {
      const reply = await t
        .http()
        .post(`${P}/login`)
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD, grant_type: 'client_credentials' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        statusCode: 400,
        error: 'unsupported_grant_type',
        message: expect.any(String),
      });
    });

    it('refuses a bad bearer token, even on the login form', async () => {
      const current = await t
        .http()
        .post(`${P}/login`)
        .auth('not-a-token', { type: 'bearer' })
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD });
      expect(current.status).toBe(401);
      expect(current.body).toEqual({
        statusCode: 401,
        error: 'invalid_token',
        message: expect.any(String),
      });
      const legacy = await t
        .http()
        .post(`${L}/token`)
        .auth('not-a-token', { type: 'bearer' })
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD });
      expect(legacy.status).toBe(401);
      expect(legacy.body).toEqual({ detail: expect.any(String) });
    });

    it('is served by the same service in both layouts', async () => {
      const login = loginCalls();
      for (const path of [`${P}/login`, `${L}/token`]) {
        const reply = await t
          .http()
          .post(path)
          .type('form')
          .send({ username: 'admin', password: ADMIN_PASSWORD });
        expect(reply.status).toBe(200);
      }
      expect(login).toHaveBeenCalledTimes(2);
    });
  });

  describe("the caller's endpoints", () => {
    it('require a token: 401 authentication_required with WWW-Authenticate', async () => {
      const requests = [
        t.http().get(`${P}/me`),
        t.http().get(`${P}/tokens`),
        t.http().post(`${P}/tokens`).send({ title: 'ci' }),
        t.http().put(`${P}/change-password`).send({ old_password: 'a', new_password: 'b' }),
      ];
      for (const request of requests) {
        const reply = await request;
        expect(reply.status).toBe(401);
        expect(reply.headers['www-authenticate']).toBe('Bearer');
        expect(reply.body).toEqual({
          statusCode: 401,
          error: 'authentication_required',
          message: expect.any(String),
        });
      }
    });

    it('take a token from either layout’s login', async () => {
      const legacy = await t
        .http()
        .post(`${L}/token`)
        .type('form')
        .send({ username: 'admin', password: ADMIN_PASSWORD });
      const reply = await t
        .http()
        .get(`${P}/me`)
        .auth(legacy.body.access_token, { type: 'bearer' });
      expect(reply.status).toBe(200);
      expect(reply.headers['applied-username']).toBe('admin');
      expect(reply.body).toMatchObject({ username: 'admin', is_admin: true });
    });

    it('create, list and revoke a named token', async () => {
      const admin = t.token('admin');
      const created = await t
        .http()
        .post(`${P}/tokens`)
        .auth(admin, { type: 'bearer' })
        .send({ title: 'nightly export', expiry_minutes: 60 });
      expect(created.status).toBe(200);
      expect(created.body.expiry_time).toMatch(CURRENT_TIME);
      const listed = await t.http().get(`${P}/tokens`).auth(admin, { type: 'bearer' });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([
        expect.objectContaining({ title: 'nightly export', username: 'admin' }),
      ]);
      const tokenId = listed.body[0].token_id;
      const revoked = await t
        .http()
        .delete(`${P}/tokens/${tokenId}`)
        .auth(admin, { type: 'bearer' });
      expect(revoked.status).toBe(200);
      const refused = await t
        .http()
        .get(`${P}/me`)
        .auth(created.body.access_token, { type: 'bearer' });
      expect(refused.status).toBe(401);
      expect(refused.body.error).toBe('invalid_token');
    });

    it('write no token, and no user, when their audit row cannot be written', async () => {
      const admin = t.token('admin');
      const named = async () =>
        (await t.http().get(`${P}/tokens`).auth(admin, { type: 'bearer' })).body as unknown[];
      const before = (await named()).length;
      const append = t
        .spyOn('database/tables/audit-events.repository', 'AuditEventsRepository', 'append')
        .mockRejectedValueOnce(new Error('audit table unavailable'));
      const created = await t
        .http()
        .post(`${P}/tokens`)
        .auth(admin, { type: 'bearer' })
        .send({ title: 'never audited' });
      expect(created.status).toBe(500);
      expect(created.body.access_token).toBeUndefined();
      expect(await named()).toHaveLength(before);

      append.mockRejectedValueOnce(new Error('audit table unavailable'));
      const user = await t
        .http()
        .post(`${P}/users`)
        .auth(admin, { type: 'bearer' })
        .send({ username: 'unaudited', password: 'unaudited-password' });
      expect(user.status).toBe(500);
      const users = await t.http().get(`${P}/users`).auth(admin, { type: 'bearer' });
      expect(users.body.map((u: { username: string }) => u.username)).not.toContain('unaudited');
      // The refusal itself was audited once the database took writes again.
      expect(append).toHaveBeenLastCalledWith(
        expect.objectContaining({ action: 'user.create', outcome: 'failure', target: 'unaudited' }),
      );
    });

    it('answer a body of the wrong shape with 400 invalid_request', async () => {
      const admin = t.token('admin');
      const expiry = await t
        .http()
        .post(`${P}/tokens`)
        .auth(admin, { type: 'bearer' })
        .send({ title: 'bad', expiry_minutes: 0 });
      expect(expiry.status).toBe(400);
      expect(expiry.body).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message: expect.stringContaining('expiry_minutes'),
      });
      const password = await t
        .http()
        .put(`${P}/change-password`)
        .auth(admin, { type: 'bearer' })
        .send({ old_password: ADMIN_PASSWORD, new_password: 42 });
      expect(password.status).toBe(400);
      expect(password.body).toEqual({
        statusCode: 400,
        error: 'invalid_request',
        message: expect.stringContaining('new_password'),
      });
    });

    it('answer If-None-Match: * with the body, not an empty 304 (they send no ETag)', async () => {
      const admin = t.token('admin');
      for (const path of [`${P}/me`, `${P}/tokens`, `${P}/user-fields`, `${L}/data-catalog`]) {
        const reply = await t
          .http()
          .get(path)
          .auth(admin, { type: 'bearer' })
          .set('If-None-Match', '*');
        expect([path, reply.status]).toEqual([path, 200]);
        expect(reply.text).not.toBe('');
      }
    });

    it('refuses a null title (it would have made a temporary token of a named one)', async () => {
      const admin = t.token('admin');
      const tokens = async () =>
        (await t.http().get(`${P}/tokens`).auth(admin, { type: 'bearer' })).body as unknown[];
      const before = (await tokens()).length;
      for (const body of [{ title: null }, { title: null, expiry_minutes: 60 }, { title: '' }]) {
        const reply = await t.http().post(`${P}/tokens`).auth(admin, { type: 'bearer' }).send(body);
        expect([reply.status, reply.body]).toEqual([
          400,
          { statusCode: 400, error: 'invalid_request', message: expect.stringContaining('title') },
        ]);
      }
      expect(await tokens()).toHaveLength(before);
      // Without a title it is still a temporary token, and Studio's body (a title, null expiry) a named one.
      const temporary = await t.http().post(`${P}/tokens`).auth(admin, { type: 'bearer' }).send({});
      expect(temporary.status).toBe(200);
      const named = await t
        .http()
        .post(`${P}/tokens`)
        .auth(admin, { type: 'bearer' })
        .send({ title: 'studio', expiry_minutes: null });
      expect(named.status).toBe(200);
      expect(await tokens()).toHaveLength(before + 1);
    });
  });
});
