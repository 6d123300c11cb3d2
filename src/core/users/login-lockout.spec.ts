import { addressKey, lockoutOf, userKey } from '@/core/users/login-lockout';

const LIMITS = { maxFailures: 3, maxFailuresPerAddress: 10, windowSeconds: 60 };
const NOW = Date.parse('2026-11-26T00:10:00Z');

function row(key: string, failures: number, secondsAgo: number) {
  return { key, failures, oldest: new Date(NOW - secondsAgo * 1000) };
}

describe('login lockout', () => {
  it('locks a username at its limit until its oldest failure leaves the window', () => {
    expect(lockoutOf([row(userKey('mia'), 2, 10)], LIMITS, NOW)).toBeUndefined();
    expect(lockoutOf([row(userKey('mia'), 3, 10)], LIMITS, NOW)).toEqual({
      by: 'user',
      retryAfterSeconds: 50,
    });
  });

  it('locks an address at its own limit', () => {
    expect(lockoutOf([row(addressKey('10.0.0.1'), 9, 5)], LIMITS, NOW)).toBeUndefined();
    expect(lockoutOf([row(addressKey('10.0.0.1'), 10, 5)], LIMITS, NOW)).toEqual({
      by: 'address',
      retryAfterSeconds: 55,
    });
  });

  it('answers the lock that ends last, and never less than a second', () => {
    const rows = [row(userKey('mia'), 3, 59.9), row(addressKey('::1'), 12, 20)];
    expect(lockoutOf(rows, LIMITS, NOW)).toEqual({ by: 'address', retryAfterSeconds: 40 });
    expect(lockoutOf([row(userKey('mia'), 3, 60)], LIMITS, NOW)).toEqual({
      by: 'user',
      retryAfterSeconds: 1,
    });
  });

  it('cuts long usernames to the column', () => {
    expect(userKey('x'.repeat(400))).toHaveLength(255);
  });
});
