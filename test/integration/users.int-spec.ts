import { L, P } from '../support/api';
import { ADMIN_PASSWORD } from '../support/server';
import { useApp } from './bootstrap';

/**
 * The users controller, in process. User management exists in the current layout only (interface 4.6);
 * what the legacy layout brings to it is its token, which works here as any other.
 */
describe('users', () => {
  const t = useApp({ users: { erin: { role: 'employee' } } });

  /** The service call adding a user ends in (today's name; the one place to adjust). */
  const createCalls = () => t.spyOn('users/users.service', 'UsersService', 'create');

  it('lists the user fields to anyone', async () => {
    const reply = await t.http().get(`${P}/user-fields`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual([
      { name: 'username', type: 'string', required: true },
      { name: 'is_admin', type: 'boolean', required: false, default: false },
      expect.objectContaining({ name: 'role', type: 'string', default: 'employee' }),
    ]);
  });

  it('requires a token to list users: 401 authentication_required', async () => {
    const reply = await t.http().get(`${P}/users`);
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toBe('Bearer');
    expect(reply.body).toEqual({
      statusCode: 401,
      error: 'authentication_required',
      message: expect.any(String),
    });
  });

  it('lists users, without passwords, to any signed-in user', async () => {
    const reply = await t.http().get(`${P}/users`).auth(t.token('erin'), { type: 'bearer' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(
      expect.arrayContaining([
        { username: 'admin', is_admin: true, role: 'employee' },
        { username: 'erin', is_admin: false, role: 'employee' },
      ]),
    );
  });

  it('adds a user for an administrator, who can then sign in', async () => {
    const create = createCalls();
    const reply = await t
      .http()
      .post(`${P}/users`)
      .auth(t.token('admin'), { type: 'bearer' })
      .send({ username: 'max', password: 'max-password', role: 'manager' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(create).toHaveBeenCalledTimes(1);
    const token = await t.login('max', 'max-password');
    const me = await t.http().get(`${P}/me`).auth(token, { type: 'bearer' });
    expect(me.body).toEqual({ username: 'max', is_admin: false, role: 'manager' });
  });

  it('keeps user management from non-admins: 403 forbidden, before the service', async () => {
    const create = createCalls();
    const requests = [
      t.http().post(`${P}/users`).send({ username: 'eve', password: 'eve-password' }),
      t.http().put(`${P}/users/erin`).send({ is_admin: true }),
      t.http().delete(`${P}/users/admin`),
    ];
    for (const request of requests) {
      const reply = await request.auth(t.token('erin'), { type: 'bearer' });
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({
        statusCode: 403,
        error: 'forbidden',
        message: expect.any(String),
      });
    }
    expect(create).not.toHaveBeenCalled();
  });

  it('answers a bad user body with 400 invalid_user', async () => {
    const bodies = [
      { username: 'eve', password: 'eve-password', role: 'boss' },
      { username: 'eve', password: 'eve-password', is_admin: 'yes' },
      { username: 'eve' },
      { username: 'erin', password: 'another-password' },
    ];
    for (const body of bodies) {
      const reply = await t
        .http()
        .post(`${P}/users`)
        .auth(t.token('admin'), { type: 'bearer' })
        .send(body);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        statusCode: 400,
        error: 'invalid_user',
        message: expect.any(String),
      });
    }
    const password = await t
      .http()
      .put(`${P}/users/erin`)
      .auth(t.token('admin'), { type: 'bearer' })
      .send({ password: 'new-password' });
    expect(password.status).toBe(400);
    expect(password.body.error).toBe('invalid_user');
  });

  it('answers a JSON body that does not parse with 400 invalid_request', async () => {
    const reply = await t
      .http()
      .post(`${P}/users`)
      .auth(t.token('admin'), { type: 'bearer' })
      .set('Content-Type', 'application/json')
      .send('{"username": ');
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      statusCode: 400,
      error: 'invalid_request',
      message: 'The request body is not valid JSON',
    });
  });

  it('refuses the operations that would lose the admin', async () => {
    const demote = await t
      .http()
      .put(`${P}/users/admin`)
      .auth(t.token('admin'), { type: 'bearer' })
      .send({ is_admin: false });
    expect(demote.status).toBe(400);
    expect(demote.body.error).toBe('invalid_user_operation');
    const remove = await t
      .http()
      .delete(`${P}/users/admin`)
      .auth(t.token('admin'), { type: 'bearer' });
    expect(remove.status).toBe(400);
    expect(remove.body.error).toBe('invalid_user_operation');
  });

  it('takes a token from the legacy login as well', async () => {
    const legacy = await t
      .http()
      .post(`${L}/token`)
      .type('form')
      .send({ username: 'admin', password: ADMIN_PASSWORD });
    expect(legacy.status).toBe(200);
    const reply = await t
      .http()
      .put(`${P}/users/erin`)
      .auth(legacy.body.access_token, { type: 'bearer' })
      .send({ role: 'manager' });
    expect(reply.status).toBe(200);
    const listed = await t.http().get(`${P}/users`).auth(t.token('admin'), { type: 'bearer' });
    expect(listed.body).toEqual(
      expect.arrayContaining([{ username: 'erin', is_admin: false, role: 'manager' }]),
    );
  });

  it('deletes a user and their tokens at once', async () => {
    const token = await t.addUser('temp');
    const reply = await t
      .http()
      .delete(`${P}/users/temp`)
      .auth(t.token('admin'), { type: 'bearer' });
    expect(reply.status).toBe(200);
    const refused = await t.http().get(`${P}/me`).auth(token, { type: 'bearer' });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_token');
    const again = await t
      .http()
      .delete(`${P}/users/temp`)
      .auth(t.token('admin'), { type: 'bearer' });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('user_not_found');
  });
});
