/**
 * Which failed logins lock a login: per username and per client address within a window (LOGIN_* settings).
 * Pure, so the server's limiter and `drey users list` decide alike; the failures live in Postgres
 * (`login_failures`), shared by every process, so lifting a lock there lifts it for all of them.
 */

export interface LockoutLimits {
  /** Failures of one username within the window that lock it (LOGIN_MAX_FAILURES). */
  maxFailures: number;
  /** Failures from one client address within the window that lock it (LOGIN_MAX_FAILURES_PER_ADDRESS). */
  maxFailuresPerAddress: number;
  windowSeconds: number;
}

/** The failures of one key within the window. */
export interface KeyFailures {
  key: string;
  failures: number;
  /** The oldest failure in the window: the lock ends when it leaves the window. */
  oldest: Date;
}

export interface Lockout {
  /** What is locked: the username, or the client address (which an administrator cannot lift). */
  by: 'user' | 'address';
  /** Whole seconds until a login may be tried again, at least 1. */
  retryAfterSeconds: number;
}

/** A username's key. Names are cut to fit the column (an attacker may send any length). */
export function userKey(username: string): string {
  return `user:${username.slice(0, 250)}`;
}

export function addressKey(address: string): string {
  return `addr:${address}`;
}

/** The lock among these keys' failures that ends last, or undefined when none has reached its limit. */
export function lockoutOf(
  rows: readonly KeyFailures[],
  limits: LockoutLimits,
  now: number,
): Lockout | undefined {
  let longest: Lockout | undefined;
  for (const row of rows) {
    const by = row.key.startsWith('user:') ? 'user' : 'address';
    const limit = by === 'user' ? limits.maxFailures : limits.maxFailuresPerAddress;
    if (row.failures < limit) continue;
    const until = row.oldest.getTime() + limits.windowSeconds * 1000;
    const retryAfterSeconds = Math.max(1, Math.ceil((until - now) / 1000));
    if (!longest || retryAfterSeconds > longest.retryAfterSeconds) {
      longest = { by, retryAfterSeconds };
    }
  }
  return longest;
}
