import { formatLegacyTimestamp } from '@/legacy/timestamps';

describe('formatLegacyTimestamp', () => {
  it('writes the offset as +00:00, with six fractional digits', () => {
    expect(formatLegacyTimestamp(new Date('2026-11-22T13:35:00.123Z'))).toBe(
      '2026-11-22T13:35:00.123000+00:00',
    );
  });
  it('shows "never" as the last microsecond of 9999', () => {
    expect(formatLegacyTimestamp(null)).toBe('9999-12-31T23:59:59.999999+00:00');
  });
});
