import { Api, L, P, signJwt } from './support/api';
import { drey } from './support/drey-cli';
import { TestServer, startServer } from './support/server';

const INVALID = 'The access token is invalid, expired or revoked';

/**
 * One resolver turns a credential into a caller for every door (issue 37): a credential it refuses is
 * refused the same way, with the same code and message, by both layouts, the fast route, MCP over HTTP and
 * `drey mcp` over stdio.
 */
describe('a refused credential is refused alike at every door', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let refused: [string, string, string][];

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    const named = await api.request('POST', `${P}/tokens`, {
      token: admin,
      json: { title: 'revoked before use' },
    });
    expect(named.status).toBe(200);
    // The named token's id is its `jti`.
    const namedToken = named.body.access_token as string;
    const jti = JSON.parse(Buffer.from(namedToken.split('.')[1], 'base64url').toString()).jti;
    const revoked = await api.request('DELETE', `${P}/tokens/${jti as string}`, { token: admin });
    expect(revoked.status).toBe(200);
    const [head, payload] = admin.split('.');
    const now = Math.floor(Date.now() / 1000);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    refused = [
      ['a forged signature', `${head}.${payload}.${'A'.repeat(43)}`, INVALID],
      ['an expired token', signJwt({ ...claims, exp: now - 10 }, t.env.JWT_SECRET), INVALID],
      ['a revoked named token', namedToken, INVALID],
      ['an unsigned token', signJwt({ ...claims }, '', { alg: 'none', typ: 'JWT' }), INVALID],
      [
        'a token with claims Drey never signs',
        signJwt({ sub: 'admin', jti: 'not-a-uuid' }, t.env.JWT_SECRET),
        INVALID,
      ],
      ['text that is no token', 'hello', INVALID],
    ];
  });
  afterAll(() => t.close());

  it('over HTTP: both layouts, the fast route and MCP answer 401 invalid_token with one message', async () => {
    for (const [what, token, message] of refused) {
      const doors = {
        'fast route': await api.get(`${P}/datasets/expenses_by_month/results`, token),
        'current layout': await api.request('POST', `${P}/datasets/expenses_by_month/results`, {
          token,
          json: {},
        }),
        'a public route': await api.get(`${P}/data-catalog`, token),
        'legacy layout': await api.get(`${L}/dataset/expenses-by-month`, token),
        'MCP over HTTP': await api.request('POST', `${P}/mcp`, {
          token,
          headers: { Accept: 'application/json, text/event-stream' },
          json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        }),
      };
      for (const [door, reply] of Object.entries(doors)) {
        expect([what, door, reply.status]).toEqual([what, door, 401]);
        expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
        const said = door === 'legacy layout' ? reply.body.detail : reply.body.message;
        expect([what, door, said]).toEqual([what, door, message]);
        if (door !== 'legacy layout') expect(reply.body.error).toBe('invalid_token');
      }
    }
  });

  it('an Authorization header of another scheme, and a login token in x_embed_token, are refused', async () => {
    const shape = await api.get(`${P}/datasets/expenses_by_month/results`, undefined, {
      Authorization: `Token ${admin}`,
    });
    expect([shape.status, shape.body.message]).toEqual([
      401,
      'The Authorization header must be "Bearer <token>"',
    ]);
    // A token in a URL ends up in logs and histories: only an embedding's may be sent there.
    const linked = await api.get(`${P}/datasets/expenses_by_month/results?x_embed_token=${admin}`);
    expect([linked.status, linked.body.error]).toEqual([401, 'invalid_token']);
    expect(linked.body.message).toContain('x_embed_token carries embedding tokens only');
  });

  it('over stdio: drey mcp refuses the same tokens with the same message', async () => {
    const { PORT: _port, ...env } = t.env;
    // Each start costs a process and an application (seconds): the refusals that differ most.
    const kinds = ['a forged signature', 'a revoked named token', 'text that is no token'];
    for (const [what, token, message] of refused.filter(([kind]) => kinds.includes(kind))) {
      const ran = await drey(['mcp'], { ...env, DREY_TOKEN: token }, { input: '' });
      expect([what, ran.code, ran.stdout]).toEqual([what, 1, '']);
      expect([what, ran.stderr]).toEqual([
        what,
        expect.stringContaining(`DREY_TOKEN was refused (${message})`),
      ]);
    }
  });
});
