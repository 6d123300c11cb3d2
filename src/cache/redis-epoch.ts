import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';

/**
 * A value shared by every process that changes whenever one of them says something changed: what a process
 * derived from the database before the change is stale once the value differs. {@link current} is read once
 * per turn of the event loop.
 */
export interface Epochs {
  /** The value now, read after the call was made; null before any change. Rejects when it cannot be read. */
  current(): Promise<string | null>;
  /** Replaces the value; resolves once every process's next read will see it. */
  advance(): Promise<void>;
  close(): Promise<void>;
}

/**
 * {@link Epochs} in one Redis key. A read answers every caller of a turn of the event loop with one GET,
 * sent at the end of that turn (as TokenLookup does for Postgres), so it is never older than any of their
 * calls. Each change writes a new random value, not a counter: after Redis restarts empty (it keeps nothing
 * on disk here), a counter could come back to a value a process still holds. Commands fail at once while
 * Redis is unreachable (no offline queue): the caller falls back to the database rather than waits.
 */
export class RedisEpoch implements Epochs {
  private readonly redis: Redis;
  private reading?: Promise<string | null>;

  constructor(
    url: string,
    private readonly key: string,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    // Failed commands reject, and the callers fall back; the connection's own errors would be unhandled.
    this.redis.on('error', () => undefined);
  }

  current(): Promise<string | null> {
    this.reading ??= new Promise<string | null>((resolve, reject) => {
      setImmediate(() => {
        this.reading = undefined;
        this.redis.get(this.key).then(resolve, reject);
      });
    });
    return this.reading;
  }

  async advance(): Promise<void> {
    await this.redis.set(this.key, randomUUID());
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
