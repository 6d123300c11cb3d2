import { DomainError } from '@/core/errors';

/** The kinds of expensive work counted per caller. */
export type SlotKind = 'query' | 'export' | 'render';

const WHAT: Record<SlotKind, string> = {
  query: 'queries',
  export: 'exports',
  render: 'dashboard renders',
};

/** Seconds a refused caller is told to wait: such work takes a second or a few. */
const RETRY_AFTER_SECONDS = 1;

/**
 * How much expensive work one caller may have running at once in this process: uncached queries, exports
 * and dashboard renders each take a slot until they end. Beyond the limit the caller gets 429
 * `rate_limited` with `Retry-After`, so that one client cannot take every engine thread or browser page
 * while others wait. Cached answers take no slot. Counted per process: what a caller can exhaust (engine
 * threads, Chromium pages) is per process too.
 */
export class CallerSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly limits: Readonly<Record<SlotKind, number>>) {}

  /** Takes a slot, or throws 429; the returned function gives it back (once, however often called). */
  take(kind: SlotKind, caller: string): () => void {
    const key = `${kind}\u0000${caller}`;
    const count = this.held.get(key) ?? 0;
    if (count >= this.limits[kind]) {
      throw new DomainError(
        'rate_limited',
        `You have ${count} ${WHAT[kind]} running, the most one caller may have at once; try again when one ends`,
        RETRY_AFTER_SECONDS,
      );
    }
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left <= 0) this.held.delete(key);
      else this.held.set(key, left);
    };
  }

  /** Runs `work` holding a slot. */
  async run<T>(kind: SlotKind, caller: string, work: () => Promise<T>): Promise<T> {
    const release = this.take(kind, caller);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Holds a slot while a stream is read: taken at the first read, given back when it ends or is dropped. */
  async *stream<T>(kind: SlotKind, caller: string, source: AsyncIterable<T>): AsyncGenerator<T> {
    const release = this.take(kind, caller);
    try {
      yield* source;
    } finally {
      release();
    }
  }

  /** Slots held now, for tests and metrics. */
  heldCount(): number {
    let total = 0;
    for (const count of this.held.values()) total += count;
    return total;
  }
}

/**
 * Whose slots a request counts against: the signed-in user (all their tokens together), or the client's
 * address for anonymous callers.
 */
export function slotOwner(username: string | null, address: string | undefined): string {
  return username !== null ? `user:${username}` : `address:${address ?? 'unknown'}`;
}
