import { Api, BENCH_L, BENCH_P } from './support/api';
import { ADMIN_PASSWORD, BENCH_PROJECT, TestServer, startServer } from './support/server';
import { until } from './support/wait';

const EXPORT = `${BENCH_P}/datasets/orders_detail/results`;

/**
 * Per-caller limits on expensive work (CALLER_MAX_*): one client holding its exports or renders open
 * gets 429 with Retry-After for more, while other callers are served.
 */
describe('per-caller limits', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer({
      PROJECT_DIR: BENCH_PROJECT,
      // Tens of MB of CSV: more than the sockets buffer, so an export that is not read stays open.
      ORDERS_ROWS: '300000',
      CALLER_MAX_EXPORTS: '1',
      CALLER_MAX_RENDERS: '1',
    });
    api = new Api(t.url);
    const login = await api.request('POST', `${BENCH_P}/login`, {
      form: { username: 'admin', password: ADMIN_PASSWORD },
    });
    admin = login.body.access_token as string;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const exportAs = (token?: string) =>
    fetch(`${t.url}${EXPORT}`, {
      headers: { accept: 'text/csv', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });

  it('refuses a second export of one caller while the first is open, not another caller', async () => {
    const first = await exportAs(admin);
    expect(first.status).toBe(200);
    // Its body is not read: the export stays open, holding the caller's one slot.
    const second = await exportAs(admin);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toEqual({
      statusCode: 429,
      error: 'rate_limited',
      message: expect.stringContaining('exports'),
      retry_after: 1,
    });
    const legacy = await fetch(`${t.url}${BENCH_L}/dataset/orders-detail`, {
      headers: { accept: 'text/csv', authorization: `Bearer ${admin}` },
    });
    expect(legacy.status).toBe(429);
    expect(await legacy.json()).toEqual({
      detail: expect.stringContaining('exports'),
      retry_after: 1,
    });

    const anonymous = await exportAs();
    expect(anonymous.status).toBe(200);
    await anonymous.body?.cancel();

    // Once the first is dropped, its slot is given back.
    await first.body?.cancel();
    const again = await until(
      async () => {
        const reply = await exportAs(admin);
        await reply.body?.cancel();
        return reply.status;
      },
      (status) => status === 200,
    );
    expect(again).toBe(200);
  });
});
