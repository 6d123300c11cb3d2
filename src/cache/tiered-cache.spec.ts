import { Page, TieredCache, ResultCodec } from '@/cache/tiered-cache';
import type { Claim, Ending, ReadyWait, SharedResults, SharedState } from '@/cache/shared-results';

/** The shared store in memory, with Redis' semantics for what the cache uses (lock expiry included). */
class MemoryShared implements SharedResults {
  readonly values = new Map<string, string>();
  readonly errors = new Map<string, string>();
  readonly locks = new Map<string, { owner: string; until: number }>();
  private readonly waiters = new Set<{ key: string; wake: () => void }>();

  private lockOf(key: string) {
    const lock = this.locks.get(key);
    return lock && lock.until > Date.now() ? lock : undefined;
  }

  state(key: string): Promise<SharedState> {
    return Promise.resolve({
      value: this.values.get(key),
      error: this.errors.get(key),
      locked: this.lockOf(key) !== undefined,
    });
  }

  claim(key: string, owner: string, ms: number): Promise<Claim> {
    const value = this.values.get(key);
    const error = this.errors.get(key);
    if (value !== undefined || error !== undefined) {
      return Promise.resolve({ value, error, owner: false, locked: false });
    }
    if (this.lockOf(key)) return Promise.resolve({ owner: false, locked: true });
    this.locks.set(key, { owner, until: Date.now() + ms });
    return Promise.resolve({ owner: true, locked: true });
  }

  renewLock(key: string, owner: string, ms: number): Promise<boolean> {
    const lock = this.lockOf(key);
    if (lock?.owner !== owner) return Promise.resolve(false);
    lock.until = Date.now() + ms;
    return Promise.resolve(true);
  }

  finish(key: string, owner: string, ending: Ending): Promise<void> {
    if (ending.value !== undefined) this.values.set(key, ending.value);
    if (ending.error !== undefined) this.errors.set(key, ending.error);
    if (this.lockOf(key)?.owner === owner) this.locks.delete(key);
    for (const waiter of [...this.waiters]) if (waiter.key === key) waiter.wake();
    return Promise.resolve();
  }

  waitReady(key: string, ms: number): ReadyWait {
    let wake = () => undefined as void;
    const promise = new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake(), ms);
      const waiter = {
        key,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      wake = waiter.wake;
      this.waiters.add(waiter);
    });
    return { promise, cancel: () => wake() };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const CODEC: ResultCodec<number[]> = {
  encode: (value) => JSON.stringify(value),
  decode: (text) => JSON.parse(text) as number[],
  bytes: (value) => 8 * value.length,
  encodeError: (error) => (error instanceof Error ? error.message : undefined),
  decodeError: (text) => new Error(text),
};

const OPTIONS = { memoryBytes: 1024, maxEntryBytes: 1024, ttlSeconds: 60, waitLimitMs: 5000 };

function cache(shared?: SharedResults, options = {}) {
  return new TieredCache(CODEC, shared, { ...OPTIONS, pollMs: 20, ...options });
}

/** A computation that counts its runs and ends when told to. */
function gate() {
  let runs = 0;
  let open: (value: number[]) => void = () => undefined;
  const opened = new Promise<number[]>((resolve) => (open = resolve));
  return {
    compute: () => {
      runs++;
      return opened;
    },
    open: (value: number[]) => open(value),
    runs: () => runs,
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('TieredCache', () => {
  it('runs one computation for concurrent requests in a process, then answers from memory', async () => {
    const results = cache();
    const work = gate();
    const asked = [1, 2, 3].map(() => results.get('k', work.compute));
    work.open([42]);
    const answers = await Promise.all(asked);
    expect(answers.map((answer) => answer.outcome)).toEqual(['executed', 'joined', 'joined']);
    expect(await results.get('k', work.compute)).toEqual({ value: [42], outcome: 'memory' });
    expect(work.runs()).toBe(1);
  });

  it('runs one computation for requests in two processes sharing a store', async () => {
    const shared = new MemoryShared();
    const [first, second] = [cache(shared), cache(shared)];
    const work = gate();
    const one = first.get('k', work.compute);
    await tick();
    const two = second.get('k', work.compute);
    await tick();
    work.open([7]);
    expect(await one).toEqual({ value: [7], outcome: 'executed' });
    expect(await two).toEqual({ value: [7], outcome: 'joined' });
    expect(await cache(shared).get('k', work.compute)).toEqual({ value: [7], outcome: 'shared' });
    expect(work.runs()).toBe(1);
  });

  it('passes the computing process’s error to the waiting ones', async () => {
    const shared = new MemoryShared();
    const failing = () =>
      new Promise<number[]>((_, reject) => setTimeout(() => reject(new Error('bad SQL')), 50));
    const one = cache(shared).get('k', failing);
    await tick();
    const two = cache(shared).get('k', () => Promise.resolve([1]));
    await expect(one).rejects.toThrow('bad SQL');
    await expect(two).rejects.toThrow('bad SQL');
  });

  it('takes over when the computing process died and its lock lapsed', async () => {
    const shared = new MemoryShared();
    // A process that took the lock and never finished: its lock lapses after 100 ms.
    await shared.claim('k', 'dead', 100);
    const answer = await cache(shared, { lockMs: 100 }).get('k', () => Promise.resolve([5]));
    expect(answer).toEqual({ value: [5], outcome: 'executed' });
  });

  it('keeps nothing when told the result may change, but still shares a running computation', async () => {
    const results = cache();
    const work = gate();
    const asked = [results.get('k', work.compute, false), results.get('k', work.compute, false)];
    work.open([1]);
    expect((await Promise.all(asked)).map((answer) => answer.outcome)).toEqual([
      'executed',
      'joined',
    ]);
    await results.get('k', work.compute, false);
    expect(work.runs()).toBe(2);
  });

  it('runs the query itself when the shared store fails', async () => {
    const shared = new MemoryShared();
    shared.claim = () => Promise.reject(new Error('Connection is closed.'));
    const failures: unknown[] = [];
    const results = cache(shared, { onStoreError: (error: unknown) => failures.push(error) });
    expect(await results.get('k', () => Promise.resolve([3]))).toEqual({
      value: [3],
      outcome: 'executed',
    });
    expect(failures).toHaveLength(1);
  });

  it('counts a page’s compressed forms in the memory budget, and drops a page they push past its cap', () => {
    // Budget 1,024 bytes; each page 100 bytes of body, "k<n>" keys, 4-byte ETags.
    const results = cache(undefined, { memoryBytes: 1024, maxEntryBytes: 400 });
    const pages: Page[] = Array.from({ length: 8 }, () => ({
      body: Buffer.alloc(100),
      etag: '"e"',
    }));
    pages.forEach((page, n) => results.keepPage(`k${n}`, page));
    expect(pages.every((page, n) => results.page(`k${n}`) === page)).toBe(true);
    // Each gains 200 bytes of compressed forms, kept again as the writer does: 305 bytes a page now, so
    // three of the eight fit in 1,024 bytes and the least recently used go.
    pages.forEach((page, n) => {
      page.encoded = { br: Buffer.alloc(90), gzip: Buffer.alloc(110) };
      results.keepPage(`k${n}`, page);
    });
    expect(pages.map((_, n) => results.page(`k${n}`) !== undefined)).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    // Past the cap of one entry (400 bytes): no longer kept at all.
    pages[7].encoded = { br: Buffer.alloc(150), gzip: Buffer.alloc(150) };
    results.keepPage('k7', pages[7]);
    expect(results.page('k7')).toBeUndefined();
  });
});
