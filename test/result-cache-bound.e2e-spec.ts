import Redis from 'ioredis';
import { counter, executions } from './support/observe';
import { Api, P } from './support/api';
import { TestServer, startServer } from './support/server';
import { REDIS_URL } from './support/services';

/** RESULT_CACHE_REDIS_MB of the servers: 51 KB, room for a few dozen monthly results. */
const REDIS_MB = '0.05';
const BOUND = Math.floor(0.05 * 1024 * 1024);
const SELECTIONS = 400;

/** Selection `i`: one of 200 start dates, each with two end dates. */
function selection(i: number): { start: string; end: string } {
  const start = new Date(Date.UTC(2024, 0, 1 + (i % 200))).toISOString().slice(0, 10);
  return { start, end: i < SELECTIONS / 2 ? '2024-12-31' : '2024-10-31' };
}

describe('dataset results kept in Redis, within RESULT_CACHE_REDIS_MB', () => {
  let t: TestServer;
  let api: Api;
  let redis: Redis;
  let prefix: string;
  /** Every expense, to compute each selection's monthly totals (in cents) apart from the service. */
  let expenses: { date: string; amount: number }[];

  beforeAll(async () => {
    t = await startServer({ RESULT_CACHE_REDIS_MB: REDIS_MB, METRICS_PUBLIC: 'true' });
    api = new Api(t.url);
    prefix = `${t.env.REDIS_PREFIX}:results`;
    redis = new Redis(REDIS_URL);
    const all = await api.get(`${P}/datasets/expense_transactions/results`, await api.adminToken());
    expenses = all.body.data;
    expect(expenses).toHaveLength(1000);
  });
  afterAll(async () => {
    await redis?.quit();
    await t?.close();
  });

  const path = (i: number) => {
    const { start, end } = selection(i);
    return `${P}/datasets/expenses_by_month/results?start_date=${start}&end_date=${end}`;
  };
  const expected = (i: number) => {
    const { start, end } = selection(i);
    const cents = new Map<string, number>();
    for (const { date, amount } of expenses) {
      if (date < start || date > end) continue;
      const month = date.slice(0, 7);
      cents.set(month, (cents.get(month) ?? 0) + Math.round(amount * 100));
    }
    return [...cents].sort(([a], [b]) => b.localeCompare(a));
  };
  const answered = (data: { month: string; total_amount: number }[]) =>
    data.map(({ month, total_amount }) => [month, Math.round(total_amount * 100)]);

  /**
   * What Redis holds under the results' prefix, read in one script so that stores running meanwhile cannot
   * make a sum of two moments: its keys, the bytes of the values (STRLEN), Redis' own count of every key
   * (MEMORY USAGE), and the total the service accounts.
   */
  const held = async () => {
    const [keys, values, valueBytes, memoryUsage, used] = (await redis.eval(
      `local keys = redis.call('keys', ARGV[1])
      local values, valueBytes, memoryUsage = 0, 0, 0
      for _, key in ipairs(keys) do
        if key:sub(1, #ARGV[2]) == ARGV[2] then
          values = values + 1
          valueBytes = valueBytes + redis.call('strlen', key)
        end
        memoryUsage = memoryUsage + (redis.call('memory', 'usage', key, 'samples', '0') or 0)
      end
      return {#keys, values, valueBytes, memoryUsage, tonumber(redis.call('get', ARGV[3]) or '0')}`,
      0,
      `${prefix}:*`,
      `${prefix}:value:`,
      `${prefix}:lru:used`,
    )) as number[];
    return { keys, values, valueBytes, memoryUsage, used };
  };
  const expectWithinBound = (now: Awaited<ReturnType<typeof held>>) => {
    expect(now.valueBytes).toBeLessThanOrEqual(BOUND);
    expect(now.memoryUsage).toBeLessThanOrEqual(BOUND);
    expect(now.used).toBeLessThanOrEqual(BOUND);
  };

  it('keeps a few dozen of 400 distinct anonymous selections, the least recently used out, each answer right', async () => {
    const most = { keys: 0, values: 0 };
    for (let first = 0; first < SELECTIONS; first += 8) {
      const batch = Array.from({ length: 8 }, (_, k) => first + k);
      const replies = await Promise.all(batch.map((i) => api.get(path(i))));
      batch.forEach((i, k) => {
        expect(replies[k].status).toBe(200);
        expect(answered(replies[k].body.data)).toEqual(expected(i));
      });
      const now = await held();
      expectWithinBound(now);
      most.keys = Math.max(most.keys, now.keys);
      most.values = Math.max(most.values, now.values);
    }
    expect(executions(t.server, 'expenses_by_month')).toHaveLength(SELECTIONS);
    // Each result counts over 1,000 bytes with its key and accounting (1,160 to 1,290 seen): at most 52 of
    // the 400 fit, and beside them only the accounting (3 keys) and the locks of the 8 requests in flight.
    expect(most.values).toBeGreaterThan(10);
    expect(most.values).toBeLessThanOrEqual(Math.floor(BOUND / 1000));
    expect(most.keys).toBeLessThanOrEqual(Math.floor(BOUND / 1000) + 3 + 8);

    // Another process finds the latest selections in Redis, and answers them right...
    const second = await t.another();
    const api2 = new Api(second.url);
    for (let i = SELECTIONS - 5; i < SELECTIONS; i++) {
      expect(answered((await api2.get(path(i))).body.data)).toEqual(expected(i));
    }
    expect(executions(second, 'expenses_by_month')).toHaveLength(0);
    const outcome = (name: string) =>
      counter(
        second.url,
        'drey_result_cache_requests_total',
        `dataset="expenses_by_month",outcome="${name}"`,
      );
    expect((await outcome('shared')) + (await outcome('joined'))).toBe(5);
    // ...while the first ones, the least recently used, were evicted: it runs them again, still right.
    for (let i = 0; i < 3; i++) {
      expect(answered((await api2.get(path(i))).body.data)).toEqual(expected(i));
    }
    expect(executions(second, 'expenses_by_month')).toHaveLength(3);
    const after = await held();
    expectWithinBound(after);
    expect(after.values).toBeLessThanOrEqual(Math.floor(BOUND / 1000));
  });
});
