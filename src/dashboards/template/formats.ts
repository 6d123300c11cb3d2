/**
 * How dashboard helpers print values. Pages are rendered on the server, for readers anywhere and for PNG
 * images, so the locale is fixed (en-US: `1,234.50`) rather than taken from the reader's browser.
 */

export const VALUE_FORMATS = ['auto', 'text', 'integer', 'number', 'month', 'date'] as const;
export type ValueFormat = (typeof VALUE_FORMATS)[number];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MAX_DECIMALS = 4;

export function isValueFormat(value: unknown): value is ValueFormat {
  return typeof value === 'string' && (VALUE_FORMATS as readonly string[]).includes(value);
}

/** A number from a result value: JSON numbers, and decimals or big integers sent as strings. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

/** Digits after the point as the value is written (`2320.8` has 1), capped. */
export function decimalsOf(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  if (/e/i.test(text)) return MAX_DECIMALS;
  const point = text.indexOf('.');
  return point < 0 ? 0 : Math.min(text.length - point - 1, MAX_DECIMALS);
}

/** Grouped thousands and exactly `decimals` digits after the point: `2,320.80`. */
export function formatNumber(value: number, decimals: number): string {
  return new Intl.NumberFormat('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(value);
}

/** `2024-03` → `Mar 2024`; anything else unchanged. */
export function formatMonth(value: string): string {
  const match = /^(\d{4})-(\d{2})$/.exec(value);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 12) return value;
  return `${MONTHS[Number(match[2]) - 1]} ${match[1]}`;
}

/** `2024-03-05` → `5 Mar 2024` (no time zone involved); anything else unchanged. */
export function formatDate(value: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 12) return value;
  return `${Number(match[3])} ${MONTHS[Number(match[2]) - 1]} ${match[1]}`;
}

/**
 * One value as text. `decimals` applies to `number` and `auto` numbers; callers pass the column's widest
 * value so that a column lines up (`2,124.97` above `2,320.80`, not `2,320.8`).
 */
export function formatValue(value: unknown, format: ValueFormat = 'auto', decimals = 2): string {
  if (value === null || value === undefined || value === '') return '';
  if (typeof value === 'number' && !Number.isFinite(value)) return '';
  switch (format) {
    case 'text':
      return asText(value);
    case 'month':
      return formatMonth(asText(value));
    case 'date':
      return formatDate(asText(value));
    case 'integer':
    case 'number':
    case 'auto': {
      const number = toNumber(value);
      if (number === null) return asText(value);
      return formatNumber(number, format === 'integer' ? 0 : decimals);
    }
  }
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
