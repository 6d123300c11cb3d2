import { createHmac } from 'node:crypto';
import { Api, P } from './support/api';
import { JWT_SECRET, ServerProcess, TestServer, startServer } from './support/server';

/** The secret the servers sign with before the rotation (the tests' usual one) and after it. */
const OLD = JWT_SECRET;
const NEW = 'the-secret-after-the-rotation-0123456789abcdef';

/** How long the rotation of the second server lasts from its spawn: its start plus a few requests. */
const SHORT_WINDOW_MS = 30_000;

/** Whether `token` is signed (HS256) with `secret`: its signature recomputed. */
function signedWith(token: string, secret: string): boolean {
  const dot = token.lastIndexOf('.');
  const signature = createHmac('sha256', secret).update(token.slice(0, dot)).digest('base64url');
  return token.slice(dot + 1) === signature;
}

/**
 * JWT_SECRET replaced without signing anyone out, over real HTTP: servers restarted on the same database
 * with the new secret, the old one in JWT_PREVIOUS_SECRETS until JWT_PREVIOUS_SECRETS_UNTIL.
 */
describe('JWT_SECRET rotation', () => {
  let t: TestServer;
  // Tokens the first server signed with the old secret: a login's, a named one that never expires, and one
  // that no server has seen since (none has its signature remembered).
  let login: string;
  let named: string;
  let unseen: string;
  // A login signed after the rotation.
  let fresh: string;

  const me = (server: ServerProcess, token: string) => new Api(server.url).get(`${P}/me`, token);

  beforeAll(async () => {
    t = await startServer();
    const api = new Api(t.url);
    login = await api.adminToken();
    unseen = await api.adminToken();
    const created = await api.request('POST', `${P}/tokens`, {
      token: login,
      json: { title: 'ci', expiry_minutes: null },
    });
    expect(created.status).toBe(200);
    named = created.body.access_token as string;
    for (const token of [login, named, unseen]) expect(signedWith(token, OLD)).toBe(true);
    await t.server.stop();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps the old tokens working after a restart with the new secret, and signs new logins with it', async () => {
    const until = new Date(Date.now() + 60 * 60_000).toISOString();
    const server = await t.another({
      JWT_SECRET: NEW,
      JWT_PREVIOUS_SECRETS: OLD,
      JWT_PREVIOUS_SECRETS_UNTIL: until,
    });
    try {
      for (const token of [login, named]) {
        const reply = await me(server, token);
        expect(reply.status).toBe(200);
        expect(reply.body.username).toBe('admin');
      }
      fresh = await new Api(server.url).adminToken();
      expect(signedWith(fresh, NEW)).toBe(true);
      expect(signedWith(fresh, OLD)).toBe(false);
      expect((await me(server, fresh)).status).toBe(200);
      expect(server.logs).toContainEqual(
        expect.objectContaining({
          msg: 'tokens of previous JWT secrets accepted',
          secrets: 1,
          until: new Date(until).toISOString(),
        }),
      );
      // Never logged: the secrets themselves.
      expect(JSON.stringify(server.logs)).not.toContain(OLD);
    } finally {
      await server.stop();
    }
  });

  it('refuses them from JWT_PREVIOUS_SECRETS_UNTIL on, also a token it has already accepted', async () => {
    const until = Date.now() + SHORT_WINDOW_MS;
    const server = await t.another({
      JWT_SECRET: NEW,
      JWT_PREVIOUS_SECRETS: OLD,
      JWT_PREVIOUS_SECRETS_UNTIL: new Date(until).toISOString(),
    });
    try {
      expect((await me(server, login)).status).toBe(200);
      expect((await me(server, named)).status).toBe(200);
      // The server took the window to start: the acceptance above proves nothing about its end.
      expect(Date.now()).toBeLessThan(until);

      // The end of the window is a time: wait for it.
      await new Promise((resolve) => setTimeout(resolve, until - Date.now() + 50));
      for (const token of [login, named, unseen]) {
        const reply = await me(server, token);
        expect(reply.status).toBe(401);
        expect(reply.body.error).toBe('invalid_token');
      }
      expect((await me(server, fresh)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it.each([
    ['without JWT_PREVIOUS_SECRETS', { JWT_SECRET: NEW }],
    [
      'with a JWT_PREVIOUS_SECRETS_UNTIL already past, which it warns of',
      {
        JWT_SECRET: NEW,
        JWT_PREVIOUS_SECRETS: OLD,
        JWT_PREVIOUS_SECRETS_UNTIL: new Date(Date.now() - 60_000).toISOString(),
      },
    ],
  ])('refuses them after a restart %s', async (_case, env) => {
    const server = await t.another(env);
    try {
      for (const token of [login, named, unseen]) {
        const reply = await me(server, token);
        expect(reply.status).toBe(401);
        expect(reply.body.error).toBe('invalid_token');
      }
      expect((await me(server, fresh)).status).toBe(200);
      const warned = server.logs.some(
        (line) => line.msg === 'tokens of previous JWT secrets no longer accepted',
      );
      expect(warned).toBe('JWT_PREVIOUS_SECRETS' in env);
    } finally {
      await server.stop();
    }
  });
});
