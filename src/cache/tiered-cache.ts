import { randomUUID } from 'node:crypto';
import { ByteLru } from '@/cache/byte-lru';
import type { Ending, SharedResults, SharedState } from '@/cache/shared-results';

/** How values of a cache travel between processes and how much memory they hold. */
export interface ResultCodec<T> {
  encode(value: T): string;
  decode(text: string): T;
  /** Approximate bytes the value holds in memory. */
  bytes(value: T): number;
  /** An error other processes waiting for the same key should get too; undefined: they run it themselves. */
  encodeError(error: unknown): string | undefined;
  decodeError(text: string): Error;
}

/**
 * A serialised response with its ETag, kept beside the results, and its compressed forms once a request
 * asked for them (the writer adds them, `sendReply`; the page is kept again to count them).
 */
export interface Page {
  /**
   * Its UTF-8 bytes, written as they are: not text encoded again on every send (see docs/performance.md,
   * "Figures behind the code", "Cached pages as bytes").
   */
  body: Buffer;
  etag: string;
  /** Its compressed forms by content coding: the HTTP edge names and writes them, the cache counts them. */
  encoded?: Partial<Record<string, Buffer>>;
}

/**
 * Where a value came from: this process's memory, the shared store, another request's execution (in this
 * process or another) that this one waited for, or an execution of its own.
 */
export type Outcome = 'memory' | 'shared' | 'joined' | 'executed';

export interface TieredCacheOptions {
  /** Budget of the in-process level, results and pages together; 0 keeps nothing in memory. */
  memoryBytes: number;
  /** Values whose encoding is bigger are neither stored nor kept. */
  maxEntryBytes: number;
  /** Lifetime of values in the shared store. */
  ttlSeconds: number;
  /** Lock lifetime; the owner renews it while it computes, so it lapses only when the owner died. */
  lockMs?: number;
  /** How often a waiting process looks again if no notice came (a notice normally wakes it at once). */
  pollMs?: number;
  /** How long a process waits for another's execution before running the query itself. */
  waitLimitMs: number;
  /** Told when the shared store failed and the request went on without it. */
  onStoreError?: (error: unknown) => void;
}

/** The shared store failed; what the request does next does not depend on it. */
class StoreFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('shared result store failed');
  }
}

async function store<R>(work: Promise<R>): Promise<R> {
  try {
    return await work;
  } catch (error) {
    throw new StoreFailure(error);
  }
}

const ERROR_MS = 5000;

/**
 * Results by key, in two levels (this process's memory, then the shared store), with single flight:
 * concurrent requests for one key run it once, here by sharing a promise, across processes by a lock in the
 * shared store that the others wait on. Keys name everything a value depends on (the build included), so a
 * value is never stale and never needs invalidating: a new build simply asks for new keys.
 */
export class TieredCache<T> {
  private readonly memory: ByteLru<T | Page>;
  private readonly inflight = new Map<string, Promise<T>>();
  private readonly owner = randomUUID();
  private readonly lockMs: number;
  private readonly pollMs: number;
  private readonly storeFailed = (error: unknown): void => this.options.onStoreError?.(error);

  constructor(
    private readonly codec: ResultCodec<T>,
    private readonly shared: SharedResults | undefined,
    private readonly options: TieredCacheOptions,
  ) {
    this.memory = new ByteLru(options.memoryBytes);
    this.lockMs = options.lockMs ?? 5000;
    this.pollMs = options.pollMs ?? 250;
  }

  /** A serialised response kept beside the results, so that a repeated request costs no serialisation. */
  page(pageKey: string): Page | undefined {
    return this.memory.get(`p:${pageKey}`) as Page | undefined;
  }

  /**
   * Keeps `page`, or counts it again once it holds more compressed forms: they are in the memory budget, so
   * compressed pages cannot take more than it (they add a fifth or less to a JSON page: see
   * docs/performance.md, "Figures behind the code", "Cached pages as bytes").
   */
  keepPage(pageKey: string, page: Page): void {
    // Strings of JSON are mostly one byte per character in V8; the key is text too.
    let bytes = page.body.length + pageKey.length + page.etag.length;
    for (const form of Object.values(page.encoded ?? {})) bytes += form?.length ?? 0;
    if (bytes <= this.options.maxEntryBytes) this.memory.set(`p:${pageKey}`, page, bytes);
    else this.memory.delete(`p:${pageKey}`);
  }

  /** The value of `key` when this process keeps it in memory: what {@link get} answers without a promise. */
  kept(key: string): T | undefined {
    return this.memory.get(`r:${key}`) as T | undefined;
  }

  /**
   * The value of `key`, computed by `compute` unless cached or being computed already. With `cacheable`
   * false (a live database, a volatile function), concurrent requests in this process still share one
   * execution, but nothing is kept.
   */
  async get(
    key: string,
    compute: () => Promise<T>,
    cacheable = true,
  ): Promise<{ value: T; outcome: Outcome }> {
    if (cacheable) {
      const kept = this.memory.get(`r:${key}`);
      if (kept !== undefined) return { value: kept as T, outcome: 'memory' };
    }
    const running = this.inflight.get(key);
    if (running) return { value: await running, outcome: 'joined' };
    let outcome: Outcome = 'executed';
    const loading = this.load(key, compute, cacheable).then((loaded) => {
      outcome = loaded.outcome;
      return loaded.value;
    });
    this.inflight.set(key, loading);
    try {
      return { value: await loading, outcome };
    } finally {
      this.inflight.delete(key);
    }
  }

  async close(): Promise<void> {
    this.memory.clear();
    await this.shared?.close();
  }

  private keep(key: string, value: T): void {
    this.memory.set(`r:${key}`, value, this.codec.bytes(value));
  }

  private async load(
    key: string,
    compute: () => Promise<T>,
    cacheable: boolean,
  ): Promise<{ value: T; outcome: Outcome }> {
    if (cacheable && this.shared) {
      try {
        return await this.loadShared(this.shared, key, compute);
      } catch (error) {
        if (!(error instanceof StoreFailure)) throw error;
        this.storeFailed(error.cause);
      }
    }
    const value = await compute();
    if (cacheable) this.keep(key, value);
    return { value, outcome: 'executed' };
  }

  private async loadShared(
    shared: SharedResults,
    key: string,
    compute: () => Promise<T>,
  ): Promise<{ value: T; outcome: Outcome }> {
    const deadline = Date.now() + this.options.waitLimitMs;
    let waited = false;
    while (Date.now() < deadline) {
      const claim = await store(shared.claim(key, this.owner, this.lockMs));
      const found = this.found(key, claim);
      if (found !== undefined) return { value: found, outcome: waited ? 'joined' : 'shared' };
      if (claim.owner) {
        return { value: await this.computeAsOwner(shared, key, compute), outcome: 'executed' };
      }
      const other = await this.waitForOwner(shared, key, deadline);
      waited = true;
      if (other !== undefined) return { value: other, outcome: 'joined' };
      // The lock is free and nothing was stored (the owner died, or its value was too big): try again.
    }
    throw new StoreFailure(new Error(`waited ${this.options.waitLimitMs} ms for another process`));
  }

  /** A stored value (kept in memory too), a stored error (thrown), or undefined. */
  private found(key: string, state: SharedState): T | undefined {
    if (state.value !== undefined) {
      const value = this.codec.decode(state.value);
      this.keep(key, value);
      return value;
    }
    if (state.error !== undefined) throw this.codec.decodeError(state.error);
    return undefined;
  }

  /** Waits for the lock holder's value; undefined once the lock is free without one. */
  private async waitForOwner(
    shared: SharedResults,
    key: string,
    deadline: number,
  ): Promise<T | undefined> {
    while (Date.now() < deadline) {
      // Listen before looking, so that a notice sent in between is not missed.
      const ready = shared.waitReady(
        key,
        Math.min(this.pollMs, Math.max(deadline - Date.now(), 1)),
      );
      try {
        const state = await store(shared.state(key));
        const found = this.found(key, state);
        if (found !== undefined || !state.locked) return found;
        await ready.promise;
      } finally {
        ready.cancel();
      }
    }
    return undefined;
  }

  private async computeAsOwner(
    shared: SharedResults,
    key: string,
    compute: () => Promise<T>,
  ): Promise<T> {
    const renewal = setInterval(
      () => void shared.renewLock(key, this.owner, this.lockMs).catch(() => undefined),
      Math.floor(this.lockMs / 3),
    );
    const ending: Ending = { ttlSeconds: this.options.ttlSeconds, errorMs: ERROR_MS };
    // Stored, unlocked and announced once the caller has its answer: the response does not wait for
    // the encoding or for Redis. Until then the lock stands, so other processes wait for the notice.
    const finish = () => {
      clearInterval(renewal);
      void shared.finish(key, this.owner, ending).catch(this.storeFailed);
    };
    let value: T;
    try {
      value = await compute();
    } catch (error) {
      ending.error = this.codec.encodeError(error);
      finish();
      throw error;
    }
    this.keep(key, value);
    setImmediate(() => {
      try {
        const encoded = this.codec.encode(value);
        if (encoded.length <= this.options.maxEntryBytes) ending.value = encoded;
      } catch (error) {
        // Not stored: the other processes run the query themselves once the lock is freed.
        this.storeFailed(error);
      }
      finish();
    });
    return value;
  }
}
