export type Layout = 'current' | 'legacy';

/** The "never expires" instant shown as `expiry_time` of a named token without expiry. */
export const NEVER = '9999-12-31T23:59:59.999999';

/**
 * UTC timestamps with six fractional digits: `2026-11-22T13:35:00.123000Z` in the current layout,
 * `2026-11-22T13:35:00.123000+00:00` in the legacy one.
 */
export function formatTimestamp(date: Date | null, layout: Layout): string {
  const base = date === null ? NEVER : date.toISOString().replace(/\.(\d{3})Z$/, '.$1000');
  return layout === 'current' ? `${base}Z` : `${base}+00:00`;
}
