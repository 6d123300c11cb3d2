import { formatTimestamp } from '@/core/timestamps';

describe('formatTimestamp', () => {
  it('uses six fractional digits and Z', () => {
    expect(formatTimestamp(new Date('2026-11-22T13:35:00.123Z'))).toBe(
      '2026-11-22T13:35:00.123000Z',
    );
  });
  it('shows "never" as the last microsecond of 9999', () => {
    expect(formatTimestamp(null)).toBe('9999-12-31T23:59:59.999999Z');
  });
});
