import { formatTimestamp } from '@/legacy/timestamps';

describe('formatTimestamp', () => {
  const date = new Date('2026-11-22T13:35:00.123Z');
  it('uses six fractional digits and Z in the current layout', () => {
    expect(formatTimestamp(date, 'current')).toBe('2026-11-22T13:35:00.123000Z');
  });
  it('uses +00:00 in the legacy layout', () => {
    expect(formatTimestamp(date, 'legacy')).toBe('2026-11-22T13:35:00.123000+00:00');
  });
  it('shows "never" as the last microsecond of 9999', () => {
    expect(formatTimestamp(null, 'current')).toBe('9999-12-31T23:59:59.999999Z');
  });
});
