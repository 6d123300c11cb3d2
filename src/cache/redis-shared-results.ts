import Redis from 'ioredis';
import type { Claim, Ending, ReadyWait, SharedResults, SharedState } from '@/cache/shared-results';

/**
 * Bytes Redis spends on one stored result beyond its value's allocation and the three copies of its key (the
 * value key's name, the member of the index, the field of the sizes): key objects, the expiry, the index's
 * skiplist node, hash table entries: a little above the most Redis was seen to spend (see
 * docs/performance.md, "Figures behind the code", "Redis bytes per result").
 */
const ENTRY_OVERHEAD = 320;

// The accounting of the values kept in Redis, so that they stay within `maxBytes` whoever stores them, in
// the last three KEYS of each script: LRU, a sorted set of the results' keys scored by last use (a logical
// clock: one more than the highest score, so that no two entries tie and no clock setting matters); SIZES,
// a hash of the bytes each counts; USED, their total. Only values are counted: a lock (36 bytes, 5 s unless
// renewed by its living owner) and a failure marker (one error's code and message, 5 s) are small and
// short-lived, and their number follows the queries running or failing at a time, not the selections
// clients make.
const ACCOUNTING = `local LRU, SIZES, USED = KEYS[#KEYS - 2], KEYS[#KEYS - 1], KEYS[#KEYS]
local function newest()
  local top = redis.call('zrevrange', LRU, 0, 0, 'withscores')
  return top[2] and tonumber(top[2]) or 0
end
-- A hit makes the entry the most recently used. XX: a value stored without accounting (by a version
-- before the bound) is not taken in; its TTL reclaims it.
local function touch(member)
  redis.call('zadd', LRU, 'xx', newest() + 1, member)
end
-- Takes an entry out of the accounting, its recorded size too, whether its value is still there (the
-- caller deletes it) or already expired; answers the total left.
local function forget(member)
  redis.call('zrem', LRU, member)
  local size = redis.call('hget', SIZES, member)
  if not size then return tonumber(redis.call('get', USED) or '0') end
  redis.call('hdel', SIZES, member)
  return redis.call('decrby', USED, size)
end
`;

// Each step is one script, so that it is one round trip and atomic. The lock is compared with its owner
// before it is extended or freed, so that a process whose lock expired never touches the lock another took.
// A read that finds no value while the entry is still accounted for means the value expired: its size is
// taken off at once (an expired entry nobody asks for again is taken off when eviction reaches it).
const CLAIM = `${ACCOUNTING}
local value = redis.call('get', KEYS[1])
if value then touch(ARGV[3]) else forget(ARGV[3]) end
local failure = redis.call('get', KEYS[2])
if value or failure then return {value or false, failure or false, 0} end
if redis.call('set', KEYS[3], ARGV[1], 'PX', ARGV[2], 'NX') then return {false, false, 1} end
return {false, false, 0}`;
const STATE = `${ACCOUNTING}
local value = redis.call('get', KEYS[1])
if value then touch(ARGV[1]) else forget(ARGV[1]) end
return {value or false, redis.call('get', KEYS[2]) or false, redis.call('exists', KEYS[3])}`;
// Storing a value replaces any earlier copy (as ByteLru.set does), then evicts the least recently used
// entries until the total is within the bound: their value keys, named from the prefix in ARGV[7] (keys a
// script reaches this way must be on one Redis, as they are: Drey does not run on Redis Cluster), and their
// recorded sizes, so that an entry whose value expired is still taken off. They go 64 at a time, five
// commands for each batch, which holds Redis a fraction of the time of commands for each entry (see
// docs/performance.md, "Figures behind the code", "Evicting from Redis in batches").
// The new entry is the newest and alone fits, so eviction ends before it; should it be all that is left,
// the total had drifted (keys removed by hand) and is set right. The accounting lives as long as the
// latest value stored: once none has been stored for a TTL, every value has expired, and so has the
// accounting of them, so a prefix no longer used leaves nothing behind.
const FINISH = `${ACCOUNTING}
-- What the allocator gives a value of n bytes (with its sds header and NUL): jemalloc, Redis' own, has four
-- size classes between powers of two, so a value may take up to a quarter more than its length (a result
-- of 530 bytes takes 640). Counting it keeps Redis' own MEMORY USAGE of the keys within the bound.
local function allocated(n)
  if n < 256 then n = n + 4 elseif n < 65536 then n = n + 6 else n = n + 10 end
  local step = 1
  while step * 8 < n do step = step * 2 end
  return math.ceil(n / step) * step
end
if ARGV[2] ~= '' then
  local member, maxBytes, valuePrefix = ARGV[6], tonumber(ARGV[8]), ARGV[7]
  local size = allocated(#ARGV[2]) + #valuePrefix + 3 * #member + tonumber(ARGV[9])
  forget(member)
  if size <= maxBytes then
    redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3])
    redis.call('zadd', LRU, newest() + 1, member)
    redis.call('hset', SIZES, member, size)
    local used = redis.call('incrby', USED, size)
    while used > maxBytes do
      local oldest = redis.call('zrange', LRU, 0, 63)
      local sizes = redis.call('hmget', SIZES, unpack(oldest))
      local victims, keys, freed = {}, {}, 0
      for i, victim in ipairs(oldest) do
        if victim == member or used - freed <= maxBytes then break end
        victims[i], keys[i] = victim, valuePrefix .. victim
        freed = freed + (tonumber(sizes[i]) or 0)
      end
      if #victims == 0 then
        redis.call('set', USED, size)
        break
      end
      redis.call('unlink', unpack(keys))
      redis.call('zrem', LRU, unpack(victims))
      redis.call('hdel', SIZES, unpack(victims))
      used = redis.call('decrby', USED, freed)
    end
    for _, key in ipairs({LRU, SIZES, USED}) do
      if redis.call('ttl', key) < tonumber(ARGV[3]) then redis.call('expire', key, ARGV[3]) end
    end
  else
    redis.call('unlink', KEYS[1])
  end
end
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
  dreyState(...args: (string | number)[]): Promise<[string | null, string | null, number]>;
  dreyFinish(...args: (string | number)[]): Promise<number>;
  dreyRenew(...args: (string | number)[]): Promise<number>;
}

export interface RedisSharedResultsOptions {
  /**
   * Bytes the stored results may take in Redis, all processes together, their keys and accounting
   * included; past it the least recently used go. A result bigger than this is not stored; 0 stores none
   * (locks and notices still make processes wait for one execution).
   */
  maxBytes: number;
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
  private readonly accounting: string[];
  private readonly maxBytes: number;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly subscribed: Promise<void>;

  constructor(url: string, prefix: string, options: RedisSharedResultsOptions) {
    const connection = {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectionName: 'drey-results',
    };
    this.redis = new Redis(url, connection) as Redis & Scripts;
    this.redis.defineCommand('dreyClaim', { numberOfKeys: 6, lua: CLAIM });
    this.redis.defineCommand('dreyState', { numberOfKeys: 6, lua: STATE });
    this.redis.defineCommand('dreyFinish', { numberOfKeys: 7, lua: FINISH });
    this.redis.defineCommand('dreyRenew', { numberOfKeys: 1, lua: RENEW });
    // A subscribed connection can do nothing else; it queues its SUBSCRIBE until it is connected.
    this.subscriber = new Redis(url, { ...connection, enableOfflineQueue: true });
    // Errors surface on the commands that fail; without listeners ioredis would also print them.
    this.redis.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.channel = `${prefix}:results:ready`;
    this.prefix = `${prefix}:results`;
    this.accounting = [`${this.prefix}:lru`, `${this.prefix}:lru:sizes`, `${this.prefix}:lru:used`];
    this.maxBytes = options.maxBytes;
    this.subscriber.on('message', (_channel: string, key: string) => this.wake(key));
    this.subscribed = this.subscriber.subscribe(this.channel).then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Resolves once commands can be sent (before that they fail at once, having no offline queue) and notices
   * are heard.
   */
  async connected(): Promise<void> {
    if (this.redis.status !== 'ready') {
      await new Promise<void>((resolve) => this.redis.once('ready', () => resolve()));
    }
    await this.subscribed;
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
    const keys = [this.valueKey(key), this.errorKey(key), this.lockKey(key), ...this.accounting];
    const [value, error, locked] = await this.redis.dreyState(...keys, key);
    return { value: value ?? undefined, error: error ?? undefined, locked: locked === 1 };
  }

  async claim(key: string, owner: string, ms: number): Promise<Claim> {
    const keys = [this.valueKey(key), this.errorKey(key), this.lockKey(key), ...this.accounting];
    const [value, error, owned] = await this.redis.dreyClaim(...keys, owner, ms, key);
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
    const valuePrefix = this.valueKey('');
    // A string's UTF-8 bytes are at least its length: a value that cannot fit is not sent at all.
    const minBytes = (ending.value?.length ?? 0) + valuePrefix.length + 3 * key.length;
    const value = minBytes + ENTRY_OVERHEAD <= this.maxBytes ? (ending.value ?? '') : '';
    await this.redis.dreyFinish(
      ...keys,
      ...this.accounting,
      owner,
      value,
      ending.ttlSeconds,
      ending.error ?? '',
      ending.errorMs,
      key,
      valuePrefix,
      this.maxBytes,
      ENTRY_OVERHEAD,
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
