import { Client } from 'pg';
import { Api, P } from './support/api';
import { Reply } from './support/http';
import { TestServer, startServer } from './support/server';
import { until } from './support/wait';

/**
 * Postgres drops the server's connection in the middle of an administrator's action (a failover, an
 * operator's pg_terminate_backend, a restart). The machine's Postgres keeps running for the other tests:
 * only the backend serving the action is terminated, from an admin connection, while it waits on a lock
 * this test holds on the table it is about to write. The rule: 503 with Retry-After, never a 500, and the
 * action either done with its audit row or not done at all (its refusal audited as such).
 */
describe('a connection dropped in the middle of an action', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let db: Client;
  let databaseName: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    db = new Client({ connectionString: t.env.DATABASE_URL });
    await db.connect();
    databaseName = new URL(t.env.DATABASE_URL).pathname.slice(1);
  });
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  /**
   * Sends `request` while `table` is locked, terminates the backend of the server that waits on the lock
   * with `statement` (an INSERT, DELETE or UPDATE of that table), lets the lock go, and answers the reply.
   */
  async function dropMidAction(
    table: string,
    statement: RegExp,
    request: () => Promise<Reply>,
  ): Promise<Reply> {
    const holder = new Client({ connectionString: t.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const reply = request();
      // The server's backend, blocked on the lock in the middle of the action's transaction.
      const waiting = await until(
        async () =>
          (
            await db.query<{ pid: number; query: string }>(
              `SELECT pid, query FROM pg_stat_activity
                WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
              [databaseName],
            )
          ).rows.filter((row) => statement.test(row.query)),
        (rows) => rows.length > 0,
        20_000,
        20,
      );
      expect(waiting).toHaveLength(1);
      await db.query('SELECT pg_terminate_backend($1)', [waiting[0].pid]);
      await holder.query('ROLLBACK');
      return await reply;
    } finally {
      await holder.end();
    }
  }

  async function auditRows(action: string, target: string) {
    return (
      await db.query<{ outcome: string; details: { error?: string } }>(
        'SELECT outcome, details FROM audit_events WHERE action = $1 AND target = $2 ORDER BY id',
        [action, target],
      )
    ).rows;
  }

  function expectRetryLater(reply: Reply) {
    expect({ status: reply.status, error: reply.body?.error }).toEqual({
      status: 503,
      error: 'not_ready',
    });
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  async function namedToken(title: string): Promise<{ id: string; token: string }> {
    const created = await api.request('POST', `${P}/tokens`, { token: admin, json: { title } });
    expect(created.status).toBe(200);
    const token = created.body.access_token as string;
    const id = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti as string;
    return { id, token };
  }

  it('a revocation whose audit row cannot be written: 503, the token not revoked, the refusal audited', async () => {
    const { id, token } = await namedToken('dropped at its audit row');
    const reply = await dropMidAction('audit_events', /INSERT INTO "audit_events"/, () =>
      api.request('DELETE', `${P}/tokens/${id}`, { token: admin }),
    );
    expectRetryLater(reply);
    // Not done: the row is there, the token still works, and no success row claims otherwise.
    expect((await db.query('SELECT 1 FROM access_tokens WHERE id = $1', [id])).rowCount).toBe(1);
    expect((await api.get(`${P}/me`, token)).status).toBe(200);
    expect(await auditRows('token.revoke', id)).toEqual([
      { outcome: 'failure', details: { error: 'not_ready' } },
    ]);
    // Tried again, as Retry-After says: done, with its row, and refused at once.
    expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
    expect((await api.get(`${P}/me`, token)).status).toBe(401);
    expect((await auditRows('token.revoke', id)).map((row) => row.outcome)).toEqual([
      'failure',
      'success',
    ]);
  });

  it('a revocation cut at its DELETE: 503, nothing done', async () => {
    const { id, token } = await namedToken('dropped at its delete');
    const reply = await dropMidAction('access_tokens', /DELETE FROM "access_tokens"/, () =>
      api.request('DELETE', `${P}/tokens/${id}`, { token: admin }),
    );
    expectRetryLater(reply);
    expect((await db.query('SELECT 1 FROM access_tokens WHERE id = $1', [id])).rowCount).toBe(1);
    expect((await api.get(`${P}/me`, token)).status).toBe(200);
    expect((await auditRows('token.revoke', id)).map((row) => row.outcome)).toEqual(['failure']);
  });

  it('a user created while the connection drops: 503, no user, no success row', async () => {
    const username = 'dropped_user';
    const reply = await dropMidAction('audit_events', /INSERT INTO "audit_events"/, () =>
      api.request('POST', `${P}/users`, {
        token: admin,
        json: { username, password: `${username}-password` },
      }),
    );
    expectRetryLater(reply);
    expect((await db.query('SELECT 1 FROM users WHERE username = $1', [username])).rowCount).toBe(
      0,
    );
    expect((await auditRows('user.create', username)).map((row) => row.outcome)).toEqual([
      'failure',
    ]);
    const again = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username, password: `${username}-password` },
    });
    expect(again.status).toBe(200);
  });

  it('a token created while the connection drops: 503 and no token row, never a token without its row', async () => {
    const before = Number((await db.query('SELECT count(*) AS n FROM access_tokens')).rows[0].n);
    const reply = await dropMidAction('audit_events', /INSERT INTO "audit_events"/, () =>
      api.request('POST', `${P}/tokens`, { token: admin, json: { title: 'dropped at birth' } }),
    );
    expectRetryLater(reply);
    expect(reply.body.access_token).toBeUndefined();
    expect(Number((await db.query('SELECT count(*) AS n FROM access_tokens')).rows[0].n)).toBe(
      before,
    );
  });

  it('an embedding revocation whose audit row cannot be written: 503, not revoked, the refusal audited', async () => {
    const issued = await api.request('POST', `${P}/embed-tokens`, {
      token: admin,
      json: { dataset: 'expenses_by_month' },
    });
    expect(issued.status).toBe(201);
    const { id, token } = issued.body as { id: string; token: string };
    const reply = await dropMidAction('audit_events', /INSERT INTO "audit_events"/, () =>
      api.request('DELETE', `${P}/embed-tokens/${id}`, { token: admin }),
    );
    expectRetryLater(reply);
    // The revocation's row went with its transaction: the token still opens its item.
    expect(
      (await db.query('SELECT 1 FROM embed_revocations WHERE token_id = $1', [id])).rowCount,
    ).toBe(0);
    expect((await api.get(`${P}/datasets/expenses_by_month/results`, token)).status).toBe(200);
    expect(await auditRows('embed_token.revoke', id)).toEqual([
      { outcome: 'failure', details: { error: 'not_ready' } },
    ]);
    expect((await api.request('DELETE', `${P}/embed-tokens/${id}`, { token: admin })).status).toBe(
      200,
    );
    expect((await api.get(`${P}/datasets/expenses_by_month/results`, token)).status).toBe(401);
  });

  it('the server answered no 500 through all of it', () => {
    const fiveHundreds = t.server.logs.filter(
      (line) => line.msg === 'request' && Number(line.status) >= 500 && line.status !== 503,
    );
    expect(fiveHundreds).toEqual([]);
  });
});
