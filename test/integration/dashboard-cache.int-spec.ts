import type * as TieredCacheFile from '@/cache/tiered-cache';
import type * as RedisSharedResultsFile from '@/cache/redis-shared-results';
import type { RedisSharedResults } from '@/cache/redis-shared-results';
import type * as RenderedPageFile from '@/dashboards/rendered-page';
import type { RenderedPage } from '@/dashboards/rendered-page';
import { REDIS_URL, uniqueName } from '../support/services';
import { fromDist } from './bootstrap';

const KB = 1024;

/**
 * The bounds of the dashboard cache, as DashboardCache builds it (a TieredCache of rendered pages over the
 * real Redis store), constructed without Nest, two caches standing for two processes: pages past the memory
 * budget leave this process's memory (and are found again in Redis), and a page whose base64 is past the
 * entry bound is kept in neither, so another process renders it itself.
 */
describe('the dashboard cache’s bounds', () => {
  const { TieredCache } = fromDist<typeof TieredCacheFile>('cache/tiered-cache');
  const { RedisSharedResults: Store } = fromDist<typeof RedisSharedResultsFile>(
    'cache/redis-shared-results',
  );
  const { RENDERED_PAGE_CODEC, etagOfBody } = fromDist<typeof RenderedPageFile>(
    'dashboards/rendered-page',
  );
  const stores: RedisSharedResults[] = [];
  let prefix: string;

  beforeEach(() => {
    prefix = uniqueName('drey-dash-int');
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  /** A cache as one process has it: memory within `memoryBytes`, Redis behind it. */
  const processCache = async (memoryBytes: number, maxEntryBytes: number) => {
    const store = new Store(REDIS_URL, prefix, { maxBytes: 64 * 1024 * KB });
    stores.push(store);
    await store.connected();
    return new TieredCache<RenderedPage>(RENDERED_PAGE_CODEC, store, {
      memoryBytes,
      maxEntryBytes,
      ttlSeconds: 60,
      waitLimitMs: 5000,
    });
  };
  /** A PNG-like body: every byte value, `size` bytes, distinct per seed. */
  const page = (size: number, seed: number): RenderedPage => {
    const body = Buffer.alloc(size);
    for (let i = 0; i < size; i++) body[i] = (i * 7 + seed) % 256;
    return { contentType: 'image/png', body, etag: etagOfBody(body) };
  };
  /** Looks `key` up, counting whether it had to render. */
  const lookUp = async (
    cache: InstanceType<typeof TieredCache<RenderedPage>>,
    key: string,
    value: RenderedPage,
  ) => {
    let rendered = 0;
    const { value: found, outcome } = await cache.get(key, () => {
      rendered += 1;
      return Promise.resolve(value);
    });
    return { found, outcome, rendered };
  };
  /** Stored to Redis once the owner has answered (TieredCache finishes after the response). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

  it('keeps at most its byte budget in memory: the oldest page goes, and is found again in Redis, unchanged', async () => {
    // 300 KB of memory; five pages of 100 KB each.
    const cache = await processCache(300 * KB, 16 * 1024 * KB);
    const pages = [0, 1, 2, 3, 4].map((seed) => page(100 * KB, seed));
    for (const [i, value] of pages.entries()) {
      expect((await lookUp(cache, `p${i}`, value)).outcome).toBe('executed');
    }
    await settle();
    // The newest two are still in memory; the first was evicted and comes back from Redis, not a render.
    expect((await lookUp(cache, 'p4', pages[4])).outcome).toBe('memory');
    const first = await lookUp(cache, 'p0', pages[0]);
    expect(first.outcome).toBe('shared');
    expect(first.rendered).toBe(0);
    expect(Buffer.compare(first.found.body, pages[0].body)).toBe(0);
    expect(first.found.etag).toBe(pages[0].etag);
  });

  it('keeps a page whose base64 is past the entry bound nowhere: another process renders it itself', async () => {
    // 120 KB per entry: a 100 KB PNG is 137 KB of base64 (past it), an 80 KB one 107 KB (within).
    const one = await processCache(1024 * KB, 120 * KB);
    const other = await processCache(1024 * KB, 120 * KB);
    const big = page(100 * KB, 9);
    const small = page(80 * KB, 10);
    expect(RENDERED_PAGE_CODEC.encode(big).length).toBeGreaterThan(120 * KB);
    await lookUp(one, 'big', big);
    await lookUp(one, 'small', small);
    await settle();
    expect(await lookUp(other, 'big', big)).toMatchObject({ outcome: 'executed', rendered: 1 });
    const found = await lookUp(other, 'small', small);
    expect(found).toMatchObject({ outcome: 'shared', rendered: 0 });
    expect(Buffer.compare(found.found.body, small.body)).toBe(0);
  });
});
