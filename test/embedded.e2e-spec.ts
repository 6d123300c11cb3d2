import { Client } from 'pg';
import { Api, P } from './support/api';
import { http } from './support/http';
import { TestServer, startServer } from './support/server';
import { until } from './support/wait';
import { threadsOf } from './support/observe';

/**
 * Longer than every pool and connection timeout between Drey and its embedded database: node-postgres'
 * pool closes a connection idle for 10 s (its default idleTimeoutMillis, which Drey keeps for PGlite);
 * pglite-socket's own idle timeout is off (Drey leaves its default, 0); TypeORM adds none.
 */
const IDLE_MS = 12_000;

const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_MS));

interface Readiness {
  status: string;
  checks: Record<string, { status: string; kind?: string; detail?: string }>;
}

async function readiness(url: string): Promise<{ status: number; body: Readiness }> {
  const reply = await http(`${url}/health/ready`);
  return { status: reply.status, body: reply.body as Readiness };
}

// By category, from ../shared/data/README.md (descending, as the dataset orders it).
const BY_CATEGORY = [
  { category: 'Transportation', total_amount: 4205.88 },
  { category: 'Shopping', total_amount: 8061.49 },
  { category: 'Food', total_amount: 4622.55 },
  { category: 'Entertainment', total_amount: 6916.87 },
  { category: 'Bills', total_amount: 6419.37 },
];

describe('embedded defaults (PGlite, in-process queue), across idle periods', () => {
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    t = await startServer({ DATABASE_URL: undefined, REDIS_URL: undefined });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves login, tokens, the catalog and a protected dataset after each idle period, and says so truthfully', async () => {
    // Log lines from here on: startServer's polling saw 503s while the first build ran.
    const from = t.server.logs.length;
    const first = await readiness(t.url);
    expect(first.status).toBe(200);
    expect(first.body.checks.database).toEqual({ status: 'up', kind: 'embedded' });
    expect(first.body.checks.queue).toEqual({ status: 'up', kind: 'in-process' });
    const before = await api.adminToken();

    for (let round = 0; round < 2; round++) {
      await idle();
      // A token issued before the idle period, on the first request after it.
      expect((await api.get(`${P}/me`, before)).status).toBe(200);
      expect((await readiness(t.url)).status).toBe(200);
      const token = await api.adminToken();
      const me = await api.get(`${P}/me`, token);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ username: 'admin', is_admin: true });
      const created = await api.request('POST', `${P}/tokens`, {
        token,
        json: { title: `after idle ${round}` },
      });
      expect(created.status).toBe(200);
      const catalog = await api.get(`${P}/data-catalog`, token);
      expect(catalog.status).toBe(200);
      expect(catalog.body.datasets.map((d: { name: string }) => d.name)).toEqual([
        'expenses_by_month',
        'expenses_grouped',
        'expense_transactions',
      ]);
      const grouped = await api.get(
        `${P}/datasets/expenses_grouped/results?group_by=cat&x_orientation=records`,
        created.body.access_token as string,
      );
      expect(grouped.status).toBe(200);
      expect(grouped.body.data).toEqual(BY_CATEGORY);
      expect((await readiness(t.url)).status).toBe(200);
    }
    // No request of the whole run was answered with a 5xx.
    const failed = t.server.logs
      .slice(from)
      .filter((line) => line.msg === 'request' && Number(line.status) >= 500);
    expect(failed).toEqual([]);
  }, 90_000);

  it("keeps its database's thread at the event loop's priority, and lowers the other threads", async () => {
    const pid = t.server.child.pid!;
    const nices = () => Promise.resolve(threadsOf(pid).map((thread) => thread.nice));
    // The server lowers new threads within a second of their start: at last, the main thread and PGlite's
    // are the only ones left at 0.
    const all = await until(
      nices,
      (values) => values.filter((nice) => nice === 0).length === 2,
      5000,
    );
    expect(all.filter((nice) => nice === 0)).toHaveLength(2);
    expect(all.filter((nice) => nice !== 0 && nice !== 10)).toEqual([]);
    expect(all.length).toBeGreaterThan(4);
  });
});

describe('readiness', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('fails while the database cannot answer the token lookup, though it still answers SELECT 1', async () => {
    expect((await readiness(t.url)).status).toBe(200);
    const client = new Client({ connectionString: t.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('LOCK TABLE access_tokens IN ACCESS EXCLUSIVE MODE');
      const other = new Client({ connectionString: t.env.DATABASE_URL });
      await other.connect();
      expect((await other.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await other.end();
      const locked = await readiness(t.url);
      expect(locked.status).toBe(503);
      expect(locked.body.checks.database).toMatchObject({ status: 'down', kind: 'postgres' });
      await client.query('ROLLBACK');
      // The lookup that timed out finishes once the lock is gone; readiness is back.
      expect((await readiness(t.url)).status).toBe(200);
    } finally {
      await client.end();
    }
  }, 30_000);
});
