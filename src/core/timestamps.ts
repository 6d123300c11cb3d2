/** The "never expires" instant shown as `expiry_time` of a named token without expiry. */
export const NEVER = '9999-12-31T23:59:59.999999';

/**
 * UTC timestamps with six fractional digits and `Z`: `2026-11-22T13:35:00.123000Z`, as the API shows every
 * instant (the legacy layout writes the offset as `+00:00`: `legacy/timestamps.ts`).
 */
export function formatTimestamp(date: Date | null): string {
  const base = date === null ? NEVER : date.toISOString().replace(/\.(\d{3})Z$/, '.$1000');
  return `${base}Z`;
}
