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
    // Public answers that need no database keep coming.
    expect((await api.get(`${P}/user-fields`)).status).toBe(200);

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
});

describe('Redis outage', () => {
  it('keeps answering everything that does not need the queue, and reports Redis down', async () => {
    const target = new URL(REDIS_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    const t = await startServer({ REDIS_URL: throughProxy(REDIS_URL, proxy.port) });
    try {
      const api = new Api(t.url);
      proxy.down();
      const admin = await api.adminToken();
      expect((await api.get(`${P}/me`, admin)).status).toBe(200);
      const ready = await api.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.queue).toMatchObject({ status: 'down', kind: 'redis' });
      proxy.up();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i += 1) {
        status = (await api.get('/health/ready')).status;
        if (status !== 200) await sleep(200);
      }
      expect(status).toBe(200);
    } finally {
      await t.close();
      await proxy.stop();
    }
  });
});
