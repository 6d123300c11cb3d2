import { Decimal } from '@/core/parameters/decimal';
import type { TextInputType } from '@/core/parameters/parameter-definition';

/** Readers for scalar values as YAML, JSON, query strings and query rows give them. */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_LOCAL = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,3})?)?$/;
const MONTH = /^\d{4}-(?:0[1-9]|1[0-2])$/;
const TIME = /^(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,3})?)?$/;
const COLOR = /^#[0-9a-fA-F]{6}$/;

/** A real calendar date written `YYYY-MM-DD` (so `2024-02-30` is not one). */
export function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

/** A `YYYY-MM-DD` string, or a JS Date (the UTC day) as some drivers and YAML 1.1 give them. */
export function dateFrom(value: unknown): string | null {
  if (typeof value === 'string') return isDate(value) ? value : null;
  if (value instanceof Date && !Number.isNaN(value.getTime())) {
    return value.toISOString().slice(0, 10);
  }
  return null;
}

/** Option ids are strings; YAML and databases may give numbers for them. */
export function idFrom(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'bigint') return value.toString();
  return null;
}

/** An empty text fits every input type: the field is simply left blank. */
export function textFitsInputType(text: string, type: TextInputType): boolean {
  if (text === '') return true;
  switch (type) {
    case 'text':
    case 'textarea':
    case 'password':
      return true;
    case 'number':
      return Decimal.parse(text) !== null;
    case 'date':
      return isDate(text);
    case 'datetime-local': {
      const match = DATETIME_LOCAL.exec(text);
      return match !== null && isDate(match[1]);
    }
    case 'month':
      return MONTH.test(text);
    case 'time':
      return TIME.test(text);
    case 'color':
      return COLOR.test(text);
  }
}

export const INPUT_TYPE_FORMS: Record<TextInputType, string> = {
  text: 'any text',
  textarea: 'any text',
  password: 'any text',
  number: 'a decimal number',
  date: 'a date YYYY-MM-DD',
  'datetime-local': 'a local date and time YYYY-MM-DDTHH:MM',
  month: 'a month YYYY-MM',
  time: 'a time HH:MM',
  color: 'a colour #rrggbb',
};

/** At most this many characters of a caller's value are echoed in a message. */
const SHOWN_AT_MOST = 100;

/**
 * For messages: a value as the person wrote it, quoted when it is text, and cut after
 * {@link SHOWN_AT_MOST} characters: a message never echoes a long input back whole.
 */
export function shown(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= SHOWN_AT_MOST) return JSON.stringify(value);
    let start = value.slice(0, SHOWN_AT_MOST);
    // Not inside a surrogate pair: half of one would print as an escape.
    if (/[\uD800-\uDBFF]$/.test(start)) start = start.slice(0, -1);
    return `${JSON.stringify(start)}... (${value.length} characters)`;
  }
  if (typeof value === 'bigint') return value.toString();
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= SHOWN_AT_MOST ? text : `${text.slice(0, SHOWN_AT_MOST)}...`;
}
