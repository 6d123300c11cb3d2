import Redis from 'ioredis';
import { Api, P } from './support/api';
import { TestServer, startServer } from './support/server';
import { TcpProxy, throughProxy } from './support/tcp-proxy';
import { BASE_DATABASE_URL, createTestDatabase, REDIS_URL } from './support/services';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Postgres outage', () => {
  let proxy: TcpProxy;
  let t: TestServer;
  let api: Api;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const target = new URL(BASE_DATABASE_URL);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    t = await startServer({ DATABASE_URL: throughProxy(database.url, proxy.port) });
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
    await proxy.stop();
    await drop();
  });

  it('answers 503 not_ready with Retry-After while Postgres is unreachable, reports it, and recovers by itself', async () => {
    for (let i = 0; i < 100 && (await api.get('/health/ready')).status !== 200; i += 1)
      await sleep(100);
    const admin = await api.adminToken();
    proxy.down();
    const during = await api.get(`${P}/me`, admin);
    expect(during.status).toBe(503);
    expect(during.body.error).toBe('not_ready');
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    const login = await api.request('POST', `${P}/login`, {
      form: { username: 'admin', password: 'x' },
    });
    expect(login.status).toBe(503);
    const ready = await api.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database.status).toBe('down');
    expect((await api.get('/health/live')).status).toBe(200);
    // Public answers that need no database keep coming, dataset results from the built environment too.
    expect((await api.get(`${P}/user-fields`)).status).toBe(200);
    expect((await api.get(`${P}/datasets/expenses_by_month/results`)).status).toBe(200);

    // Ten seconds of outage under load: only 200s (public data) and 503s (the rest), never a 500.
    const statuses = new Map<string, Set<number>>();
    const deadline = Date.now() + 10_000;
    const paths: [string, string | undefined][] = [
      [`${P}/datasets/expenses_by_month/results`, undefined],
      [`${P}/datasets/expenses_grouped/results`, admin],
      [`${P}/me`, admin],
      [`${P}/data-catalog`, undefined],
    ];
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let i = worker; Date.now() < deadline; i += 1) {
          const [path, token] = paths[i % paths.length];
          const reply = await api.get(path, token);
          const seen = statuses.get(path) ?? new Set<number>();
          seen.add(reply.status);
          statuses.set(path, seen);
        }
      }),
    );
    expect([...(statuses.get(`${P}/datasets/expenses_by_month/results`) ?? [])]).toEqual([200]);
    expect([...(statuses.get(`${P}/data-catalog`) ?? [])]).toEqual([200]);
    expect([...(statuses.get(`${P}/me`) ?? [])]).toEqual([503]);
    expect([...(statuses.get(`${P}/datasets/expenses_grouped/results`) ?? [])]).toEqual([503]);

    proxy.up();
    let recovered = 0;
    for (let i = 0; i < 50 && recovered !== 200; i += 1) {
      recovered = (await api.get(`${P}/me`, admin)).status;
      if (recovered !== 200) await sleep(200);
    }
    expect(recovered).toBe(200);
    expect((await api.get('/health/ready')).status).toBe(200);
    expect(t.server.child.exitCode).toBeNull();
    const fiveHundreds = t.server.logs.filter(
      (line) => line.msg === 'request' && Number(line.status) >= 500 && line.status !== 503,
    );
    expect(fiveHundreds).toEqual([]);
  });

  it('a server started before its database waits for it, then starts as usual', async () => {
    const database = await createTestDatabase();
    const target = new URL(BASE_DATABASE_URL);
    const late = new TcpProxy(target.hostname, Number(target.port || 5432));
    await late.start();
    late.down();
    try {
      const starting = startServer({ DATABASE_URL: throughProxy(database.url, late.port) });
      // Up once the server has tried and been refused (a fixed sleep raced a slow start on a busy machine).
      const deadline = Date.now() + 60_000;
      while (late.refused === 0 && Date.now() < deadline) await sleep(100);
      await sleep(1000);
      late.up();
      const server = await starting;
      try {
        const waits = server.server.logs.filter((line) => line.msg === 'waiting for the database');
        expect(waits.length).toBeGreaterThanOrEqual(1);
        expect(waits[0].reason).toMatch(/ECONNRESET|ECONNREFUSED|Connection terminated/);
        expect((await new Api(server.url).get('/health/ready')).status).toBe(200);
      } finally {
        await server.close();
      }
    } finally {
      await late.stop();
      await database.drop();
    }
  });

  it('a wrong database name is not waited for: the start stops at once', async () => {
    const database = await createTestDatabase();
    await database.drop();
    const started = Date.now();
    await expect(startServer({ DATABASE_URL: database.url })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('Redis outage', () => {
  it('keeps answering everything that does not need the queue, answers builds 503, and keeps the queued build', async () => {
    const target = new URL(REDIS_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    const t = await startServer({ REDIS_URL: throughProxy(REDIS_URL, proxy.port) });
    try {
      const api = new Api(t.url);
      for (let i = 0; i < 100 && (await api.get('/health/ready')).status !== 200; i += 1)
        await sleep(100);
      // The outage starts once the first build's job is done in Redis too: readiness comes a moment
      // before the worker records it there, and a job cut off then is left to BullMQ's stall check.
      const redis = new Redis(REDIS_URL);
      const completed = `${t.env.REDIS_PREFIX}:builds:completed`;
      for (let i = 0; i < 100 && (await redis.zcard(completed)) === 0; i += 1) await sleep(50);
      await redis.quit();
      proxy.down();
      const admin = await api.adminToken();
      expect((await api.get(`${P}/me`, admin)).status).toBe(200);
      const ready = await api.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.queue).toMatchObject({ status: 'down', kind: 'redis' });
      expect((await api.get(`${P}/datasets/expenses_by_month/results`)).status).toBe(200);
      const started = Date.now();
      const build = await api.request('POST', `${P}/build`, { token: admin });
      expect(build.status).toBe(503);
      expect(build.body.error).toBe('not_ready');
      expect(build.headers.get('retry-after')).not.toBeNull();
      expect(Date.now() - started).toBeLessThan(8000);
      proxy.up();
      let readyAgain = 0;
      for (let i = 0; i < 100 && readyAgain !== 200; i += 1) {
        readyAgain = (await api.get('/health/ready')).status;
        if (readyAgain !== 200) await sleep(200);
      }
      expect(readyAgain).toBe(200);
      // The build asked for during the outage was kept and runs once Redis is back.
      let latest: { status: string; requested_by: string } | undefined;
      // The worker reconnects with a growing delay, and the machine may be busy: up to a minute.
      for (let i = 0; i < 300 && latest?.status !== 'succeeded'; i += 1) {
        latest = (await api.get(`${P}/builds`, admin)).body[0];
        if (latest?.status !== 'succeeded') await sleep(200);
      }
      expect(latest).toMatchObject({ status: 'succeeded', requested_by: 'admin' });
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i += 1) {
        status = (await api.get('/health/ready')).status;
        if (status !== 200) await sleep(200);
      }
      expect(status).toBe(200);
      // The queue's connection errors are JSON warnings, not BullMQ's own prints to stderr.
      expect(
        t.server.logs.filter((line) => 'raw' in line && /Error|ECONN/.test(String(line.raw))),
      ).toEqual([]);
      expect(t.server.logs.some((line) => line.msg === 'redis connection error')).toBe(true);
    } finally {
      await t.close();
      await proxy.stop();
    }
  }, 120_000);
});
