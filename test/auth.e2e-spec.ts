import { Api, L, P, decodeJwt, signJwt } from './support/api';
import { http } from './support/http';
import {
  ADMIN_PASSWORD,
  JWT_SECRET,
  ServerProcess,
  TestServer,
  startServer,
} from './support/server';

const CURRENT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const LEGACY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

function minutesFromNow(timestamp: string): number {
  return (Date.parse(timestamp.replace(/(\.\d{3})\d{3}/, '$1')) - Date.now()) / 60000;
}

describe('authentication and tokens', () => {
  let t: TestServer;
  let api: Api;
  let second: ServerProcess;
  let api2: Api;

  beforeAll(async () => {
    t = await startServer({
      LOGIN_MAX_FAILURES: '3',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
      LOGIN_WINDOW_SECONDS: '60',
    });
    api = new Api(t.url);
    second = await t.another();
    api2 = new Api(second.url);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('login', () => {
    it('answers the current layout with is_admin and a Z timestamp 30 minutes ahead', async () => {
      const reply = await api.request('POST', `${P}/login`, {
        form: {
          username: 'admin',
          password: ADMIN_PASSWORD,
          grant_type: 'password',
          scope: '',
          client_id: 'swagger',
        },
      });
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body).sort()).toEqual([
        'access_token',
        'expiry_time',
        'is_admin',
        'token_type',
        'username',
      ]);
      expect(reply.body).toMatchObject({ token_type: 'bearer', username: 'admin', is_admin: true });
      expect(reply.body.expiry_time).toMatch(CURRENT_TIME);
      expect(minutesFromNow(reply.body.expiry_time)).toBeGreaterThan(29.5);
      expect(minutesFromNow(reply.body.expiry_time)).toBeLessThan(30.5);
      const claims = decodeJwt(reply.body.access_token);
      expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'jti', 'sub']);
      expect(claims.sub).toBe('admin');
    });

    it('accepts multipart/form-data', async () => {
      const form = new FormData();
      form.set('username', 'admin');
      form.set('password', ADMIN_PASSWORD);
      const reply = await http(`${t.url}${P}/login`, { method: 'POST', body: form });
      expect(reply.status).toBe(200);
      expect(reply.body.username).toBe('admin');
    });

    it('takes OAuth2 client credentials in a Basic header (Swagger UI sends empty ones) in both layouts', async () => {
      const body = new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD });
      const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
      for (const path of [`${P}/login`, `${L}/token`]) {
        for (const authorization of ['Basic Og==', basic('swagger-ui:a%20secret')]) {
          const reply = await http(`${t.url}${path}`, {
            method: 'POST',
            headers: { Authorization: authorization },
            body,
          });
          expect({ path, authorization, status: reply.status }).toEqual({
            path,
            authorization,
            status: 200,
          });
          expect(reply.body.username).toBe('admin');
        }
        // Credentials in the body are accepted too.
        const inBody = await http(`${t.url}${path}`, {
          method: 'POST',
          body: new URLSearchParams({
            ...Object.fromEntries(body),
            client_id: 'c',
            client_secret: 's',
          }),
        });
        expect(inBody.status).toBe(200);
      }
      const malformed = await http(`${t.url}${P}/login`, {
        method: 'POST',
        headers: { Authorization: basic('no-colon') },
        body,
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ error: 'invalid_request' });
      const legacyMalformed = await http(`${t.url}${L}/token`, {
        method: 'POST',
        headers: { Authorization: 'Basic !!' },
        body,
      });
      expect(legacyMalformed.status).toBe(400);
      expect(legacyMalformed.body.detail).toContain('client_id:client_secret');
      // Elsewhere a Basic header is still not a token.
      const me = await http(`${t.url}${P}/me`, { headers: { Authorization: 'Basic Og==' } });
      expect(me.status).toBe(401);
      expect(me.body.error).toBe('invalid_token');
    });

    it('answers the legacy layout without is_admin and with +00:00', async () => {
      const reply = await api.request('POST', `${L}/token`, {
        form: { username: 'admin', password: ADMIN_PASSWORD },
      });
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body).sort()).toEqual([
        'access_token',
        'expiry_time',
        'token_type',
        'username',
      ]);
      expect(reply.body.expiry_time).toMatch(LEGACY_TIME);
      // A token is a token: one from the legacy layout works on the current one.
      expect((await api.get(`${P}/me`, reply.body.access_token)).status).toBe(200);
    });

    it('refuses wrong credentials: 401 invalid_credentials, legacy exactly {"detail": ...}', async () => {
      const current = await api.request('POST', `${P}/login`, {
        form: { username: 'nobody', password: 'x' },
      });
      expect(current.status).toBe(401);
      expect(current.headers.get('www-authenticate')).toBe('Bearer');
      expect(current.body).toEqual({
        statusCode: 401,
        error: 'invalid_credentials',
        message: 'Incorrect username or password',
      });
      const legacy = await api.request('POST', `${L}/token`, {
        form: { username: 'nobody', password: 'x' },
      });
      expect(legacy.status).toBe(401);
      expect(legacy.body).toEqual({ detail: 'Incorrect username or password' });
    });

    it('refuses a form without a field (400 invalid_request) or with another grant type', async () => {
      const missing = await api.request('POST', `${P}/login`, { form: { username: 'admin' } });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('invalid_request');
      expect(missing.body.message).toContain('password');
      const grant = await api.request('POST', `${P}/login`, {
        form: { username: 'admin', password: ADMIN_PASSWORD, grant_type: 'client_credentials' },
      });
      expect(grant.status).toBe(400);
      expect(grant.body.error).toBe('unsupported_grant_type');
    });

    it('limits failed logins per username with 429 and Retry-After, on every process', async () => {
      const admin = await api.adminToken();
      await api.userToken(admin, 'limited');
      for (let i = 0; i < 3; i += 1) {
        const target = i % 2 === 0 ? api : api2;
        const reply = await target.request('POST', `${P}/login`, {
          form: { username: 'limited', password: 'wrong' },
        });
        expect(reply.status).toBe(401);
      }
      const blocked = await api2.request('POST', `${P}/login`, {
        form: { username: 'limited', password: 'limited-password' },
      });
      expect(blocked.status).toBe(429);
      expect(blocked.body.error).toBe('rate_limited');
      const wait = Number(blocked.headers.get('retry-after'));
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60);
      // The body says when too, for clients that show it: the same seconds, in a field and in words.
      expect(blocked.body).toEqual({
        statusCode: 429,
        error: 'rate_limited',
        message: `Too many failed logins for this username: try again in ${wait} seconds, or ask an administrator to lift the lock`,
        retry_after: wait,
      });
      const legacy = await api.request('POST', `${L}/token`, {
        form: { username: 'limited', password: 'limited-password' },
      });
      expect(legacy.status).toBe(429);
      expect(legacy.body).toEqual({
        detail: expect.stringMatching(/^Too many failed logins for this username: try again in/),
        retry_after: Number(legacy.headers.get('retry-after')),
      });
      // Another user is not blocked by them (the client address limit is separate and not reached here).
      expect(
        (
          await api.request('POST', `${P}/login`, {
            form: { username: 'admin', password: ADMIN_PASSWORD },
          })
        ).status,
      ).toBe(200);
    });

    it('lets an administrator lift a lockout, on every process, audited; nobody else may', async () => {
      const admin = await api.adminToken();
      const bystander = await api.userToken(admin, 'bystander');
      await api.userToken(admin, 'locked_out');
      for (let i = 0; i < 3; i += 1) {
        await api.request('POST', `${P}/login`, {
          form: { username: 'locked_out', password: 'wrong' },
        });
      }
      const login = (target: Api) =>
        target.request('POST', `${P}/login`, {
          form: { username: 'locked_out', password: 'locked_out-password' },
        });
      expect((await login(api2)).status).toBe(429);

      const lockout = `${P}/users/locked_out/lockout`;
      const refused = await api.request('DELETE', lockout, { token: bystander });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('forbidden');
      expect((await api.request('DELETE', lockout)).status).toBe(401);
      expect((await login(api)).status).toBe(429);
      const ghost = await api.request('DELETE', `${P}/users/ghost/lockout`, { token: admin });
      expect(ghost.status).toBe(400);
      expect(ghost.body.error).toBe('user_not_found');

      // Lifted through one process, for the other too: the failures are in Postgres.
      const lifted = await api.request('DELETE', lockout, { token: admin });
      expect(lifted.status).toBe(204);
      expect(lifted.text).toBe('');
      expect((await login(api2)).status).toBe(200);
      // Lifting again is not an error: there is nothing to lift.
      expect((await api2.request('DELETE', lockout, { token: admin })).status).toBe(204);

      const audit = await api.get(`${P}/audit?action=user.unlock&limit=10`, admin);
      expect(audit.body.events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            actor: 'admin',
            target: 'locked_out',
            outcome: 'success',
            details: { failures_forgotten: 3 },
          }),
          expect.objectContaining({ actor: 'admin', target: 'ghost', outcome: 'failure' }),
        ]),
      );
    });

    it('limits failed logins per client address too', async () => {
      // A server of its own, so that no earlier failure from this address counts.
      const strict = await startServer({ LOGIN_MAX_FAILURES_PER_ADDRESS: '4' });
      const client = new Api(strict.url);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const reply = await client.request('POST', `${P}/login`, {
          form: { username: `guess${i}`, password: 'x' },
        });
        statuses.push(reply.status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 429]);
      await strict.close();
    });
  });

  describe('tokens', () => {
    let admin: string;
    beforeAll(async () => {
      admin = await api.adminToken();
    });

    it('creates a temporary token without a title: default lifetime, not listed, not revocable', async () => {
      const reply = await api.request('POST', `${P}/tokens`, {
        token: admin,
        json: { expiry_minutes: 5 },
      });
      expect(reply.status).toBe(200);
      expect(minutesFromNow(reply.body.expiry_time)).toBeGreaterThan(29.5);
      const listed = await api.get(`${P}/tokens`, admin);
      const id = decodeJwt(reply.body.access_token).jti as string;
      expect(listed.body.map((record: { token_id: string }) => record.token_id)).not.toContain(id);
      expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(404);
      expect((await api.get(`${P}/me`, reply.body.access_token)).status).toBe(200);
    });

    it('creates a named token that never expires', async () => {
      const reply = await api.request('POST', `${P}/tokens`, {
        token: admin,
        json: { title: 'forever', expiry_minutes: null },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.expiry_time).toBe('9999-12-31T23:59:59.999999Z');
      expect(decodeJwt(reply.body.access_token).exp).toBeUndefined();
      const listed = await api.get(`${P}/tokens`, admin);
      const record = listed.body.find((r: { title: string }) => r.title === 'forever');
      expect(Object.keys(record).sort()).toEqual([
        'created_at',
        'expires_at',
        'title',
        'token_id',
        'username',
      ]);
      expect(record).toMatchObject({ username: 'admin', expires_at: null });
      expect(record.created_at).toMatch(CURRENT_TIME);
      expect((await api.get(`${P}/me`, reply.body.access_token)).status).toBe(200);
    });

    it('creates a named token that expires after expiry_minutes', async () => {
      const reply = await api.request('POST', `${P}/tokens`, {
        token: admin,
        json: { title: 'month', expiry_minutes: 43200 },
      });
      expect(minutesFromNow(reply.body.expiry_time)).toBeGreaterThan(43199);
      expect(minutesFromNow(reply.body.expiry_time)).toBeLessThan(43201);
      const listed = await api.get(`${P}/tokens`, admin);
      const record = listed.body.find((r: { title: string }) => r.title === 'month');
      expect(record.expires_at).toBe(reply.body.expiry_time);
    });

    it.each([[0], [-1], [1.5], ['10'], [true]])(
      'refuses expiry_minutes %j with 400 invalid_request',
      async (value) => {
        const reply = await api.request('POST', `${P}/tokens`, {
          token: admin,
          json: { title: 'bad', expiry_minutes: value },
        });
        expect(reply.status).toBe(400);
        expect(reply.body.error).toBe('invalid_request');
      },
    );

    it('revokes a named token at once, on every server process', async () => {
      const created = await api.request('POST', `${P}/tokens`, {
        token: admin,
        json: { title: 'to revoke' },
      });
      const token = created.body.access_token as string;
      expect((await api2.get(`${P}/me`, token)).status).toBe(200);
      const id = decodeJwt(token).jti as string;
      const revoked = await api.request('DELETE', `${P}/tokens/${id}`, { token: admin });
      expect(revoked.status).toBe(200);
      expect(revoked.text).toBe('');
      const refused = await api2.get(`${P}/me`, token);
      expect(refused.status).toBe(401);
      expect(refused.body.error).toBe('invalid_token');
      expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(404);
      expect(
        (await api.request('DELETE', `${P}/tokens/not-a-uuid`, { token: admin })).body.error,
      ).toBe('not_found');
    });

    it("cannot revoke someone else's token", async () => {
      const other = await api.userToken(admin, 'token_owner');
      const created = await api.request('POST', `${P}/tokens`, {
        token: other,
        json: { title: 'mine' },
      });
      const id = decodeJwt(created.body.access_token).jti as string;
      const reply = await api.request('DELETE', `${P}/tokens/${id}`, { token: admin });
      expect(reply.status).toBe(404);
      expect((await api.get(`${P}/me`, created.body.access_token)).status).toBe(200);
    });
  });

  describe('bearer tokens', () => {
    it('refuses a token signed with another key, alg none, a malformed one and an expired one', async () => {
      const admin = await api.adminToken();
      const claims = decodeJwt(admin);
      const forged = [
        signJwt(claims, 'another-secret-that-is-long-enough-0000000'),
        signJwt(claims, JWT_SECRET, { alg: 'none', typ: 'JWT' }),
        signJwt(claims, JWT_SECRET, { alg: 'HS512', typ: 'JWT' }),
        signJwt({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 }, JWT_SECRET),
        signJwt({ ...claims, jti: '00000000-0000-4000-8000-000000000000' }, JWT_SECRET),
        signJwt({ ...claims, sub: 'someone_else' }, JWT_SECRET),
        'not.a.token',
        'garbage',
      ];
      for (const token of forged) {
        const reply = await api.get(`${P}/me`, token);
        expect(reply.status).toBe(401);
        expect(reply.body.error).toBe('invalid_token');
        expect(reply.headers.get('www-authenticate')).toBe('Bearer');
      }
      // The real one, for contrast.
      expect((await api.get(`${P}/me`, admin)).status).toBe(200);
    });

    it('checks a present token on public endpoints too, but treats an empty header as no token', async () => {
      expect((await api.get(`${P}/user-fields`, 'garbage')).status).toBe(401);
      expect((await api.get(`${P}/user-fields`, undefined, { Authorization: '' })).status).toBe(
        200,
      );
      const bare = await api.get(`${P}/user-fields`, undefined, { Authorization: 'Bearer' });
      expect(bare.status).toBe(200);
      expect(bare.headers.get('applied-username')).toBe('');
      expect(
        (await api.get(`${P}/user-fields`, undefined, { Authorization: 'Basic YTpi' })).status,
      ).toBe(401);
    });

    it('answers 401 authentication_required without a token where one is needed', async () => {
      for (const path of [`${P}/me`, `${P}/tokens`, `${P}/users`]) {
        const reply = await api.get(path);
        expect(reply.status).toBe(401);
        expect(reply.body.error).toBe('authentication_required');
      }
    });

    it('names the caller in Applied-Username', async () => {
      const admin = await api.adminToken();
      expect((await api.get(`${P}/me`, admin)).headers.get('applied-username')).toBe('admin');
    });
  });

  describe('me and change-password', () => {
    it('returns the caller with the project fields and never a password', async () => {
      const admin = await api.adminToken();
      const token = await api.userToken(admin, 'mia', { role: 'manager' });
      const me = await api.get(`${P}/me`, token);
      expect(me.body).toEqual({ username: 'mia', is_admin: false, role: 'manager' });
    });

    it('changes the password, refusing a wrong old one', async () => {
      const admin = await api.adminToken();
      const token = await api.userToken(admin, 'pat', {}, 'first-password');
      const wrong = await api.request('PUT', `${P}/change-password`, {
        token,
        json: { old_password: 'nope', new_password: 'second' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe('invalid_password');
      const bad = await api.request('PUT', `${P}/change-password`, {
        token,
        json: { old_password: 'first-password' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('invalid_request');
      // The password policy (PASSWORD_MIN_LENGTH, 8 here), with the code of every password problem.
      for (const weak of ['1', 'seven-7']) {
        const short = await api.request('PUT', `${P}/change-password`, {
          token,
          json: { old_password: 'first-password', new_password: weak },
        });
        expect(short.status).toBe(400);
        expect(short.body).toMatchObject({
          error: 'invalid_password',
          message: 'The new password must be at least 8 characters long (PASSWORD_MIN_LENGTH)',
        });
      }
      await expect(api.login('pat', 'seven-7')).rejects.toThrow('401');
      const ok = await api.request('PUT', `${P}/change-password`, {
        token,
        json: { old_password: 'first-password', new_password: 'second-password' },
      });
      expect(ok.status).toBe(200);
      expect(ok.text).toBe('');
      await expect(api.login('pat', 'first-password')).rejects.toThrow('401');
      expect(await api.login('pat', 'second-password')).toEqual(expect.any(String));
    });
  });

  describe('project and documentation', () => {
    it('serves the project information', async () => {
      const reply = await api.get(P);
      expect(reply.body).toEqual({
        name: 'expenses',
        version: 'v1',
        label: 'Expenses',
        description: expect.any(String),
        service_version: expect.stringMatching(/^0\.5\.\d+/),
      });
    });

    it('answers 404 for another project name or version, in both layouts', async () => {
      expect((await api.get('/api/service-v0/project/other/v1')).status).toBe(404);
      expect((await api.get('/api/service-v0/project/expenses/v2/user-fields')).body.error).toBe(
        'not_found',
      );
      const legacy = await api.request('POST', '/service-v0/expenses/v9/token', {
        form: { username: 'admin', password: ADMIN_PASSWORD },
      });
      expect(legacy.status).toBe(404);
      expect(legacy.body).toEqual({ detail: expect.any(String) });
    });

    it('runs the global guards in their listed order: body type, then project, then token', async () => {
      // A body of a type the route does not take: 415 even on another project, with a forged token.
      const typed = await http(`${t.url}/api/service-v0/project/other/v1/users`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', Authorization: 'Bearer garbage' },
        body: 'x',
      });
      expect(typed.status).toBe(415);
      // Another project: 404 before the missing or forged token is looked at.
      const other = '/api/service-v0/project/other/v1/users';
      expect((await api.get(other)).body.error).toBe('not_found');
      expect((await api.get(other, 'garbage')).body.error).toBe('not_found');
      // The served project: now the token decides.
      expect((await api.get(`${P}/users`, 'garbage')).body.error).toBe('invalid_token');
    });

    it('documents every auth endpoint with the bearer and OAuth2 password schemes', async () => {
      const { body } = await api.get('/docs-json');
      for (const path of [
        `${P}/login`,
        `${P}/tokens`,
        `${P}/tokens/{token_id}`,
        `${P}/me`,
        `${P}/change-password`,
        `${P}/users`,
        `${P}/users/{username}`,
        `${P}/user-fields`,
        `${L}/token`,
        P,
      ]) {
        const key = path.replace('expenses', '{project}').replace('v1', '{version}');
        expect(Object.keys(body.paths)).toContain(key);
      }
      expect(body.components.securitySchemes.login.flows.password.tokenUrl).toBe(`${P}/login`);
      expect(body.components.schemas.NewUser.properties.role.enum).toEqual(['manager', 'employee']);
      expect((await api.get(`${P}/docs`)).status).toBe(200);
    });
  });
});
