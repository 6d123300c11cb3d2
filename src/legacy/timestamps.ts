import { formatTimestamp } from '@/core/timestamps';

/**
 * The legacy layout's timestamps: those of the current layout with the offset written `+00:00`
 * (`2026-11-22T13:35:00.123000+00:00`), as the 0.4 service wrote them.
 */
export function formatLegacyTimestamp(date: Date | null): string {
  return formatTimestamp(date).replace(/Z$/, '+00:00');
}
