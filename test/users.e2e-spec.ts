import { Api, P, decodeJwt } from './support/api';
import { ServerProcess, TestServer, startServer } from './support/server';

describe('user management', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let second: ServerProcess;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    second = await t.another();
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists the user fields: username, is_admin, then the project fields', async () => {
    const reply = await api.get(`${P}/user-fields`);
    expect(reply.body).toEqual([
      { name: 'username', type: 'string', required: true },
      { name: 'is_admin', type: 'boolean', required: false, default: false },
      {
        name: 'role',
        type: 'string',
        required: false,
        default: 'employee',
        enum: ['manager', 'employee'],
      },
    ]);
  });

  it('adds users with defaults, lists them without passwords', async () => {
    const created = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'emma', password: 'emma-pass' },
    });
    expect(created.status).toBe(200);
    expect(created.text).toBe('');
    await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'max', password: 'max-pass', role: 'manager', is_admin: true },
    });
    const list = await api.get(`${P}/users`, admin);
    expect(list.status).toBe(200);
    expect(list.body).toEqual(
      expect.arrayContaining([
        { username: 'admin', is_admin: true, role: 'employee' },
        { username: 'emma', is_admin: false, role: 'employee' },
        { username: 'max', is_admin: true, role: 'manager' },
      ]),
    );
    expect(list.text).not.toMatch(/password|argon2/i);
    // Any signed-in user may list users.
    const emma = await api.login('emma', 'emma-pass');
    expect((await api.get(`${P}/users`, emma)).status).toBe(200);
  });

  it.each([
    [{ username: 'emma', password: 'again-and-again' }, 'already exists'],
    [{ username: 'nopass' }, 'password'],
    [{ password: 'long-enough' }, 'username'],
    [{ username: 'x1', password: 'long-enough', role: 'boss' }, 'role'],
    [{ username: 'x2', password: 'long-enough', role: 7 }, 'role'],
    [{ username: 'x4', password: 'long-enough', is_admin: 'yes' }, 'is_admin'],
  ])('refuses to add %j with 400 invalid_user', async (json, mention) => {
    const reply = await api.request('POST', `${P}/users`, { token: admin, json });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_user');
    expect(reply.body.message).toContain(mention);
  });

  it.each([
    ['"1"', '1', 'at least 8 characters long (PASSWORD_MIN_LENGTH)'],
    ['"short"', 'short', 'at least 8 characters long (PASSWORD_MIN_LENGTH)'],
    ['"seven-7"', 'seven-7', 'at least 8 characters long (PASSWORD_MIN_LENGTH)'],
    ['of 257 characters', 'x'.repeat(257), 'at most 256 characters long'],
  ])('refuses a new user with a password %s: 400 invalid_password', async (_, password, why) => {
    const reply = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'weak', password },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      statusCode: 400,
      error: 'invalid_password',
      message: `Field "password" must be ${why}`,
    });
    expect((await api.get(`${P}/users`, admin)).body).not.toContainEqual(
      expect.objectContaining({ username: 'weak' }),
    );
  });

  it('documents the password policy where a new password is sent', async () => {
    const { body } = await api.get('/docs-json');
    for (const property of [
      body.components.schemas.NewUser.properties.password,
      body.components.schemas.ChangePasswordDto.properties.new_password,
    ]) {
      expect(property).toMatchObject({ minLength: 8, maxLength: 256 });
      expect(property.description).toContain('invalid_password');
    }
    const path = `${P}/users/{username}/lockout`.replace('expenses', '{project}');
    const lockout = body.paths[path.replace('v1', '{version}')];
    expect(Object.keys(lockout.delete.responses)).toEqual(
      expect.arrayContaining(['204', '400', '401', '403']),
    );
  });

  it('lets only administrators manage users (403 forbidden)', async () => {
    const emma = await api.login('emma', 'emma-pass');
    for (const [method, path, json] of [
      ['POST', `${P}/users`, { username: 'z', password: 'z-password' }],
      ['PUT', `${P}/users/emma`, { role: 'manager' }],
      ['DELETE', `${P}/users/max`, undefined],
    ] as const) {
      const reply = await api.request(method, path, { token: emma, json });
      expect(reply.status).toBe(403);
      expect(reply.body.error).toBe('forbidden');
    }
    expect(
      (
        await api.request('POST', `${P}/users`, {
          json: { username: 'z', password: 'z-password' },
        })
      ).status,
    ).toBe(401);
  });

  it('updates only the fields sent, and the change shows at once on another process', async () => {
    const emma = await api.login('emma', 'emma-pass');
    const api2 = new Api(second.url);
    // Read there first, so that the process keeps her record (TokenRecords) before it changes.
    expect((await api2.get(`${P}/me`, emma)).body.is_admin).toBe(false);
    const reply = await api.request('PUT', `${P}/users/emma`, {
      token: admin,
      json: { role: 'manager' },
    });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect((await api2.get(`${P}/me`, emma)).body).toEqual({
      username: 'emma',
      is_admin: false,
      role: 'manager',
    });
    await api.request('PUT', `${P}/users/emma`, { token: admin, json: { is_admin: true } });
    for (const process of [api, api2]) {
      expect((await process.get(`${P}/me`, emma)).body).toEqual({
        username: 'emma',
        is_admin: true,
        role: 'manager',
      });
    }
    await api.request('PUT', `${P}/users/emma`, { token: admin, json: { is_admin: false } });
    expect((await api2.get(`${P}/me`, emma)).body.is_admin).toBe(false);
  });

  it.each([
    ['emma', { password: 'new' }, 'invalid_user'],
    ['emma', { username: 'other' }, 'invalid_user'],
    ['emma', { username: 'emma', password: 'new' }, 'invalid_user'],
    ['emma', { role: 'boss' }, 'invalid_user'],
    ['ghost', { role: 'manager' }, 'user_not_found'],
    ['admin', { is_admin: false }, 'invalid_user_operation'],
  ])('refuses to update %s with %j (400 %s)', async (username, json, code) => {
    const reply = await api.request('PUT', `${P}/users/${username}`, { token: admin, json });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe(code);
  });

  it('refuses to delete admin, yourself, or a user that does not exist', async () => {
    expect((await api.request('DELETE', `${P}/users/admin`, { token: admin })).body.error).toBe(
      'invalid_user_operation',
    );
    const max = await api.login('max', 'max-pass');
    const self = await api.request('DELETE', `${P}/users/max`, { token: max });
    expect(self.status).toBe(400);
    expect(self.body.error).toBe('invalid_user_operation');
    const ghost = await api.request('DELETE', `${P}/users/ghost`, { token: admin });
    expect(ghost.status).toBe(400);
    expect(ghost.body.error).toBe('user_not_found');
  });

  it('deleting a user revokes all their tokens at once, on every process, even if the name comes back', async () => {
    const token = await api.userToken(admin, 'leaver');
    const named = (await api.request('POST', `${P}/tokens`, { token, json: { title: 'keep' } }))
      .body.access_token as string;
    const api2 = new Api(second.url);
    expect((await api2.get(`${P}/me`, named)).status).toBe(200);
    const deleted = await api.request('DELETE', `${P}/users/leaver`, { token: admin });
    expect(deleted.status).toBe(200);
    for (const old of [token, named]) {
      const reply = await api2.get(`${P}/me`, old);
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('invalid_token');
    }
    await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'leaver', password: 'leaver-password' },
    });
    expect((await api2.get(`${P}/me`, named)).status).toBe(401);
    const fresh = await api.login('leaver', 'leaver-password');
    expect(decodeJwt(fresh).sub).toBe('leaver');
    expect((await api2.get(`${P}/me`, fresh)).status).toBe(200);
  });
});
