import Redis from 'ioredis';
import type * as RedisSharedResultsFile from '@/cache/redis-shared-results';
import type { RedisSharedResults } from '@/cache/redis-shared-results';
import { REDIS_URL, uniqueName } from '../support/services';
import { until } from '../support/wait';
import { fromDist } from './bootstrap';

const OWNER = 'owner-a';
const TTL = { ttlSeconds: 60, errorMs: 5000 };

/**
 * The shared results store on the real Redis, constructed without Nest, each test under a key prefix of its
 * own: the contract the results cache relies on, and the bound on what it keeps (a few kilobytes here, where
 * the service has RESULT_CACHE_REDIS_MB), measured on what Redis holds.
 */
describe('RedisSharedResults', () => {
  const { RedisSharedResults: Store } = fromDist<typeof RedisSharedResultsFile>(
    'cache/redis-shared-results',
  );
  let redis: Redis;
  let prefix: string;
  const opened: RedisSharedResults[] = [];

  const open = async (maxBytes: number) => {
    const store = new Store(REDIS_URL, prefix, { maxBytes });
    opened.push(store);
    await store.connected();
    return store;
  };
  const valueKey = (key: string) => `${prefix}:results:value:${key}`;
  /** Claims `key` and stores `value` as the owner of its computation does. */
  const put = async (store: RedisSharedResults, key: string, value: string) => {
    expect((await store.claim(key, OWNER, 5000)).owner).toBe(true);
    await store.finish(key, OWNER, { ...TTL, value });
  };
  /** Whether Redis holds the value, asked without touching the accounting. */
  const held = async (key: string) => (await redis.exists(valueKey(key))) === 1;
  const keysUnder = async (pattern: string) => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys.sort();
  };
  /** The cached keys whose values Redis holds, by STRLEN, and what Redis itself counts for every key. */
  const measure = async () => {
    const valueKeys = await keysUnder(`${prefix}:results:value:*`);
    let valueBytes = 0;
    for (const key of valueKeys) valueBytes += await redis.strlen(key);
    let memoryUsage = 0;
    for (const key of await keysUnder(`${prefix}:*`)) {
      memoryUsage += (await redis.memory('USAGE', key, 'SAMPLES', '0')) ?? 0;
    }
    const live = valueKeys.map((key) => key.slice(valueKey('').length));
    return { live, valueBytes, memoryUsage };
  };
  /** The accounting: the index, the recorded sizes and their total. */
  const accounting = async () => {
    const index = (await redis.zrange(`${prefix}:results:lru`, 0, -1)).sort();
    const sizes = await redis.hgetall(`${prefix}:results:lru:sizes`);
    const used = Number((await redis.get(`${prefix}:results:lru:used`)) ?? '0');
    const recorded = Object.values(sizes).reduce((sum, size) => sum + Number(size), 0);
    return { index, sized: Object.keys(sizes).sort(), used, recorded, sizes };
  };
  /** The accounting describes exactly the values Redis holds, and the total is within `maxBytes`. */
  const expectConsistent = async (maxBytes: number) => {
    const { live } = await measure();
    const books = await accounting();
    expect(books.index).toEqual(live);
    expect(books.sized).toEqual(live);
    expect(books.used).toBe(books.recorded);
    expect(books.used).toBeLessThanOrEqual(maxBytes);
  };
  /** The bytes one entry of `key` with `value` counts, as recorded when stored alone (then removed). */
  const entrySize = async (key: string, value: string) => {
    await put(await open(1_000_000), key, value);
    const size = Number(await redis.hget(`${prefix}:results:lru:sizes`, key));
    await redis.unlink(...(await keysUnder(`${prefix}:*`)));
    return size;
  };
  const name = (i: number) => `key-${String(i).padStart(4, '0')}`;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  beforeEach(() => {
    prefix = uniqueName('rsr');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    const keys = await keysUnder(`${prefix}:*`);
    if (keys.length > 0) await redis.unlink(...keys);
  });
  afterAll(async () => {
    await redis.quit();
  });

  describe('contract', () => {
    it('hands the lock to one owner, stores the value, frees the lock and tells the waiters', async () => {
      const store = await open(1_000_000);
      const other = await open(1_000_000);
      expect(await store.claim('k', OWNER, 5000)).toEqual({
        value: undefined,
        error: undefined,
        owner: true,
        locked: true,
      });
      expect((await other.claim('k', 'owner-b', 5000)).owner).toBe(false);
      expect(await other.state('k')).toEqual({ value: undefined, error: undefined, locked: true });
      expect(await store.renewLock('k', OWNER, 5000)).toBe(true);
      expect(await store.renewLock('k', 'owner-b', 5000)).toBe(false);
      const ready = other.waitReady('k', 30_000);
      await store.finish('k', OWNER, { ...TTL, value: 'the value' });
      await ready.promise;
      expect(await other.state('k')).toEqual({
        value: 'the value',
        error: undefined,
        locked: false,
      });
      expect((await other.claim('k', 'owner-b', 5000)).value).toBe('the value');
    });

    it('keeps a failure for its waiters, without a value', async () => {
      const store = await open(1_000_000);
      await store.claim('bad', OWNER, 5000);
      await store.finish('bad', OWNER, { ...TTL, error: '{"kind":"domain"}' });
      expect(await store.claim('bad', 'owner-b', 5000)).toEqual({
        value: undefined,
        error: '{"kind":"domain"}',
        owner: false,
        locked: false,
      });
      expect(await keysUnder(`${prefix}:results:value:*`)).toEqual([]);
    });
  });

  describe('bounded by maxBytes', () => {
    it('keeps the stored bytes within the bound, whichever process stores, evicting the oldest', async () => {
      // Lengths just past the allocator's size classes: 4,100 bytes take 5,120.
      const value = (i: number) => 'v'.repeat([4100, 530, 2100, 1030][i % 4]);
      const maxBytes = 20_000;
      const stores = [await open(maxBytes), await open(maxBytes)];
      for (let i = 0; i < 120; i++) {
        await put(stores[i % 2], name(i), value(i));
        const { valueBytes, memoryUsage } = await measure();
        expect(valueBytes).toBeLessThanOrEqual(maxBytes);
        // Redis' own count of every key under the prefix: values, their key names and the accounting.
        expect(memoryUsage).toBeLessThanOrEqual(maxBytes);
      }
      // With no reads, the latest ones stay.
      const { live } = await measure();
      expect(live.length).toBeGreaterThan(3);
      expect(live).toEqual(Array.from(live, (_, i) => name(120 - live.length + i)));
      await expectConsistent(maxBytes);
      // Nothing but the values and their accounting is left under the prefix (no lock, no marker).
      const kinds = new Set(
        (await keysUnder(`${prefix}:*`)).map((key) => key.replace(/:value:.*$/, ':value:*')),
      );
      expect(kinds).toEqual(
        new Set(['value:*', 'lru', 'lru:sizes', 'lru:used'].map((k) => `${prefix}:results:${k}`)),
      );
      // The accounting expires with the latest value, so an abandoned prefix leaves nothing behind.
      for (const key of ['lru', 'lru:sizes', 'lru:used']) {
        const ttl = await redis.ttl(`${prefix}:results:${key}`);
        expect(ttl).toBeGreaterThan(TTL.ttlSeconds - 10);
        expect(ttl).toBeLessThanOrEqual(TTL.ttlSeconds);
      }
    });

    it('evicts the least recently used: a value read (claim or state) stays', async () => {
      const value = 'w'.repeat(300);
      const size = await entrySize(name(0), value);
      const store = await open(4 * size);
      for (let i = 0; i < 4; i++) await put(store, name(i), value);
      expect((await store.claim(name(0), OWNER, 5000)).value).toBe(value);
      await put(store, name(4), value);
      expect(await held(name(0))).toBe(true);
      expect(await held(name(1))).toBe(false);
      expect((await store.state(name(2))).value).toBe(value);
      await put(store, name(5), value);
      expect(await held(name(2))).toBe(true);
      expect(await held(name(3))).toBe(false);
      expect((await measure()).live).toEqual([0, 2, 4, 5].map(name));
      await expectConsistent(4 * size);
    });

    it('evicts as many small values as one large value needs, oldest first', async () => {
      const small = 'm'.repeat(50);
      const size = await entrySize(name(0), small);
      const large = 'L'.repeat(70 * size);
      const evicted = Math.ceil((await entrySize('large', large)) / size);
      // Room for it takes more than one batch of eviction (64).
      expect(evicted).toBeGreaterThan(64);
      const maxBytes = 100 * size;
      const store = await open(maxBytes);
      for (let i = 0; i < 100; i++) await put(store, name(i), small);
      await put(store, 'large', large);
      const { live } = await measure();
      expect(live).toEqual([
        ...Array.from({ length: 100 - evicted }, (_, i) => name(evicted + i)),
        'large',
      ]);
      await expectConsistent(maxBytes);
    });

    it('does not store a value bigger than the bound, and keeps what it held', async () => {
      const small = 's'.repeat(200);
      const size = await entrySize('small', small);
      const maxBytes = 3 * size;
      const store = await open(maxBytes);
      await put(store, 'small', small);
      await put(store, 'huge', 'h'.repeat(maxBytes));
      // Few characters but many bytes: only Redis can tell, from the UTF-8 it received.
      await put(store, 'wide', '€'.repeat(Math.floor(maxBytes / 2)));
      expect(await held('huge')).toBe(false);
      expect(await held('wide')).toBe(false);
      expect(await held('small')).toBe(true);
      await expectConsistent(maxBytes);
      // Its lock was freed all the same: the next request may compute it.
      expect((await store.claim('wide', 'owner-b', 5000)).owner).toBe(true);
    });

    it('stores nothing with a bound of 0, and still hands out locks', async () => {
      const store = await open(0);
      await put(store, 'k', 'value');
      expect(await keysUnder(`${prefix}:*`)).toEqual([]);
      expect((await store.claim('k', 'owner-b', 5000)).owner).toBe(true);
    });

    it('takes off the size of a value that expired when eviction reaches it', async () => {
      const value = 'x'.repeat(400);
      const size = await entrySize(name(0), value);
      const store = await open(4 * size);
      for (let i = 0; i < 4; i++) await put(store, name(i), value);
      await redis.pexpire(valueKey(name(0)), 1);
      await until(
        () => held(name(0)),
        (still) => !still,
        5000,
        5,
      );
      // Its recorded size makes room for the next value: no living entry has to go.
      await put(store, name(4), value);
      expect((await measure()).live).toEqual([1, 2, 3, 4].map(name));
      await expectConsistent(4 * size);
    });

    it('takes off the size of a value that expired when it is asked for again', async () => {
      const value = 'y'.repeat(400);
      const size = await entrySize(name(0), value);
      const store = await open(4 * size);
      for (let i = 0; i < 4; i++) await put(store, name(i), value);
      // The most recently used one expires (a read does not extend a value's lifetime).
      expect((await store.state(name(0))).value).toBe(value);
      await redis.pexpire(valueKey(name(0)), 1);
      await until(
        () => held(name(0)),
        (still) => !still,
        5000,
        5,
      );
      expect((await store.claim(name(0), OWNER, 5000)).owner).toBe(true);
      await expectConsistent(4 * size);
      expect((await accounting()).used).toBe(3 * size);
      await store.finish(name(0), OWNER, { ...TTL, value });
      expect((await measure()).live).toEqual([0, 1, 2, 3].map(name));
      await expectConsistent(4 * size);
    });
  });
});
