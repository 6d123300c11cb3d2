import Redis from 'ioredis';
import type { Claim, Ending, ReadyWait, SharedResults, SharedState } from '@/cache/shared-results';

// Each step is one script, so that it is one round trip and atomic. The lock is compared with its owner
// before it is extended or freed, so that a process whose lock expired never touches the lock another took.
const CLAIM = `local value = redis.call('get', KEYS[1])
local failure = redis.call('get', KEYS[2])
if value or failure then return {value or false, failure or false, 0} end
if redis.call('set', KEYS[3], ARGV[1], 'PX', ARGV[2], 'NX') then return {false, false, 1} end
return {false, false, 0}`;
const FINISH = `if ARGV[2] ~= '' then redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('set', KEYS[2], ARGV[4], 'PX', ARGV[5]) end
if redis.call('get', KEYS[3]) == ARGV[1] then redis.call('del', KEYS[3]) end
redis.call('publish', KEYS[4], ARGV[6])
return 1`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`;

/** The scripts, sent once and then called by their digest (EVALSHA), as ioredis' `defineCommand` does. */
interface Scripts {
  dreyClaim(...args: (string | number)[]): Promise<[string | null, string | null, number]>;
  dreyFinish(...args: (string | number)[]): Promise<number>;
  dreyRenew(...args: (string | number)[]): Promise<number>;
}

/**
 * {@link SharedResults} on Redis, every key under `<prefix>:results`. Commands fail at once while Redis is
 * unreachable (no offline queue): a request then runs its query itself rather than wait for Redis.
 */
export class RedisSharedResults implements SharedResults {
  private readonly redis: Redis & Scripts;
  private readonly subscriber: Redis;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(url: string, prefix: string) {
    const options = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectionName: 'drey-results',
    };
    this.redis = new Redis(url, options) as Redis & Scripts;
    this.redis.defineCommand('dreyClaim', { numberOfKeys: 3, lua: CLAIM });
    this.redis.defineCommand('dreyFinish', { numberOfKeys: 4, lua: FINISH });
    this.redis.defineCommand('dreyRenew', { numberOfKeys: 1, lua: RENEW });
    // A subscribed connection can do nothing else; it queues its SUBSCRIBE until it is connected.
    this.subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
    // Errors surface on the commands that fail; without listeners ioredis would also print them.
    this.redis.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.channel = `${prefix}:results:ready`;
    this.prefix = `${prefix}:results`;
    this.subscriber.on('message', (_channel: string, key: string) => this.wake(key));
    void this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  private valueKey(key: string): string {
    return `${this.prefix}:value:${key}`;
  }
  private errorKey(key: string): string {
    return `${this.prefix}:error:${key}`;
  }
  private lockKey(key: string): string {
    return `${this.prefix}:lock:${key}`;
  }

  async state(key: string): Promise<SharedState> {
    const replies = await this.redis
      .multi()
      .get(this.valueKey(key))
      .get(this.errorKey(key))
      .exists(this.lockKey(key))
      .exec();
    if (!replies) throw new Error('Redis aborted the transaction');
    const [value, error, locked] = replies.map(([failure, reply]) => {
      if (failure) throw failure;
      return reply;
    });
    return {
      value: typeof value === 'string' ? value : undefined,
      error: typeof error === 'string' ? error : undefined,
      locked: locked === 1,
    };
  }

  async claim(key: string, owner: string, ms: number): Promise<Claim> {
    const keys = [this.valueKey(key), this.errorKey(key), this.lockKey(key)];
    const [value, error, owned] = await this.redis.dreyClaim(...keys, owner, ms);
    return {
      value: value ?? undefined,
      error: error ?? undefined,
      owner: owned === 1,
      locked: owned === 1,
    };
  }

  async renewLock(key: string, owner: string, ms: number): Promise<boolean> {
    return (await this.redis.dreyRenew(this.lockKey(key), owner, ms)) === 1;
  }

  async finish(key: string, owner: string, ending: Ending): Promise<void> {
    const keys = [this.valueKey(key), this.errorKey(key), this.lockKey(key), this.channel];
    await this.redis.dreyFinish(
      ...keys,
      owner,
      ending.value ?? '',
      ending.ttlSeconds,
      ending.error ?? '',
      ending.errorMs,
      key,
    );
  }

  waitReady(key: string, ms: number): ReadyWait {
    let wake: () => void = () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const promise = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(timer);
        this.waiters.get(key)?.delete(wake);
        if (this.waiters.get(key)?.size === 0) this.waiters.delete(key);
        resolve();
      };
      timer = setTimeout(wake, ms);
      const set = this.waiters.get(key) ?? new Set();
      set.add(wake);
      this.waiters.set(key, set);
    });
    return { promise, cancel: () => wake() };
  }

  private wake(key: string): void {
    for (const wake of [...(this.waiters.get(key) ?? [])]) wake();
  }

  async close(): Promise<void> {
    for (const key of [...this.waiters.keys()]) this.wake(key);
    this.subscriber.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
