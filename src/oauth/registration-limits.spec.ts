import { RegistrationRate } from '@/oauth/registration-limits';

describe('RegistrationRate', () => {
  it('lets an address register perHour times an hour, then says how long to wait', () => {
    const rate = new RegistrationRate(2);
    const start = 1_000_000_000;
    expect(rate.take('a', start)).toBe(0);
    expect(rate.take('a', start + 1000)).toBe(0);
    expect(rate.take('a', start + 2000)).toBe(3598);
    expect(rate.take('b', start + 2000)).toBe(0);
    expect(rate.take('a', start + 3_600_001)).toBe(0);
  });

  it('keeps at most maxAddresses, the oldest forgotten first', () => {
    const rate = new RegistrationRate(1, 2);
    rate.take('a', 1);
    rate.take('b', 2);
    rate.take('c', 3);
    expect(rate.take('a', 4)).toBe(0);
    expect(rate.take('c', 5)).toBeGreaterThan(0);
  });
});
