import { ChildProcess, spawn } from 'node:child_process';
import { Client } from 'pg';
import { Api, P, decodeJwt } from './support/api';
import { ServerProcess, TestServer, startServer } from './support/server';
import { freePort } from './support/services';
import { TcpProxy } from './support/tcp-proxy';

/** A redis-server of this spec's own (the machine's serves the other tests), started and stopped at will. */
class OwnRedis {
  private child?: ChildProcess;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Resolves once it accepts connections (its own log line says so). */
  start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    return new Promise((resolve, reject) => {
      let output = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) =>
        reject(new Error(`redis-server exited with ${code}: ${output}`)),
      );
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
}

/**
 * Two server processes on one Postgres and one Redis: a token revoked on one is refused by the other at
 * once, also while Redis is down (the other cannot read the revocation epoch: it asks Postgres) and while
 * the revoking process alone is cut off from Redis (it cannot write the epoch the other still reads: it
 * announces the change through Postgres). Before, the other process kept serving the token for up to 60 s.
 */
describe('revocation seen by every replica at once while Redis fails', () => {
  let redis: OwnRedis;
  let proxy: TcpProxy;
  let t: TestServer;
  let a: Api;
  let b: Api;
  let serverA: ServerProcess;
  let serverB: ServerProcess;
  let admin: string;

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    // Replica a reaches Redis through a line the test can cut; b directly.
    proxy = new TcpProxy('127.0.0.1', redis.port);
    await proxy.start();
    t = await startServer({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    serverA = t.server;
    serverB = await t.another({ REDIS_URL: redis.url });
    a = new Api(serverA.url);
    b = new Api(serverB.url);
    admin = await a.adminToken();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await proxy?.stop();
    await redis?.stop();
  });

  /** A named token made on a and used on b, so that b keeps its record. */
  async function keptOnB(title: string): Promise<{ id: string; token: string }> {
    const created = await a.request('POST', `${P}/tokens`, { token: admin, json: { title } });
    expect(created.status).toBe(200);
    const token = created.body.access_token as string;
    expect((await b.get(`${P}/me`, token)).status).toBe(200);
    expect((await b.get(`${P}/me`, token)).status).toBe(200);
    return { id: decodeJwt(token).jti as string, token };
  }

  it('while the revoking replica alone cannot reach Redis, the other refuses the token at once', async () => {
    const tokens = [];
    for (let i = 0; i < 10; i += 1) tokens.push(await keptOnB(`cut ${i}`));
    proxy.down();
    try {
      const answers: number[] = [];
      for (const { id, token } of tokens) {
        expect((await a.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
        answers.push((await b.get(`${P}/me`, token)).status);
      }
      expect(answers).toEqual(tokens.map(() => 401));
      const unannounced = serverA.logs.filter(
        (line) => line.msg === 'token records change not announced through Redis',
      );
      expect(unannounced.map((line) => [line.level, line.hint])).toEqual(
        tokens.map(() => ['warn', 'announced through Postgres instead']),
      );
    } finally {
      proxy.up();
    }
  });

  it('while Redis is stopped, a token revoked on one replica is refused by the other at once, and after', async () => {
    const { id, token } = await keptOnB('stopped');
    await redis.stop();
    try {
      expect((await a.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
      expect((await b.get(`${P}/me`, token)).status).toBe(401);
      expect((await a.get(`${P}/me`, token)).status).toBe(401);
      // Tokens not revoked keep working on both, from Postgres.
      expect((await b.get(`${P}/me`, admin)).status).toBe(200);
    } finally {
      await redis.start();
    }
    // Back, empty: still refused, and a revocation announced through it is seen at once again.
    expect((await b.get(`${P}/me`, token)).status).toBe(401);
    const next = await keptOnB('after');
    expect((await a.request('DELETE', `${P}/tokens/${next.id}`, { token: admin })).status).toBe(
      200,
    );
    expect((await b.get(`${P}/me`, next.token)).status).toBe(401);
  });

  it('a token deleted in SQL by hand, in a transaction that notifies drey_token_records, is refused at once', async () => {
    const { id, token } = await keptOnB('by hand');
    const db = new Client({ connectionString: t.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query('BEGIN');
      await db.query('DELETE FROM access_tokens WHERE id = $1', [id]);
      await db.query(`SELECT pg_notify('drey_token_records', '')`);
      // Not before it commits: Postgres delivers the notification with the commit.
      expect((await b.get(`${P}/me`, token)).status).toBe(200);
      await db.query('COMMIT');
    } finally {
      await db.end();
    }
    expect((await b.get(`${P}/me`, token)).status).toBe(401);
  });

  it('answered no 5xx other than 503', () => {
    const wrong = [...serverA.logs, ...serverB.logs].filter(
      (line) => line.msg === 'request' && Number(line.status) >= 500 && line.status !== 503,
    );
    expect(wrong).toEqual([]);
  });
});
