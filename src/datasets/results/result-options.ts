import { InvalidRequestError } from '@/core/errors';
import { DEFAULT_LIMIT, ORIENTATIONS, Orientation } from '@/core/result-builtins';

/** The paging and shaping built-ins of dataset results and query-models. */
export interface ResultOptions {
  orientation: Orientation;
  /** Column names to keep, in the order asked; empty keeps every column. */
  select: string[];
  limit: number;
  offset: number;
}

function single(name: string, value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length !== 1) throw new InvalidRequestError(`${name} must be given once`);
    return value[0];
  }
  return value;
}

function wholeNumber(name: string, value: unknown, fallback: number, max: number): number {
  const raw = single(name, value);
  if (raw === undefined || raw === null || raw === '') return fallback;
  const number =
    typeof raw === 'number'
      ? raw
      : typeof raw === 'string' && /^\d+$/.test(raw.trim())
        ? Number(raw)
        : NaN;
  if (!Number.isInteger(number) || number < 0) {
    throw new InvalidRequestError(`${name} must be a whole number from 0 up`);
  }
  if (number > max) throw new InvalidRequestError(`${name} must be at most ${max}`);
  return number;
}

function columnList(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => {
    if (typeof item !== 'string' || item === '')
      throw new InvalidRequestError('x_select must list column names');
    return item;
  });
}

/**
 * Reads `x_orientation`, `x_select`, `x_limit` and `x_offset` from the raw built-ins of a GET query (strings,
 * or arrays when repeated) or a POST body (JSON values). Pure.
 */
export function parseResultOptions(
  builtins: Record<string, unknown>,
  maxRows: number,
): ResultOptions {
  const orientation = single('x_orientation', builtins.x_orientation) ?? 'records';
  if (
    typeof orientation !== 'string' ||
    !(ORIENTATIONS as readonly string[]).includes(orientation)
  ) {
    throw new InvalidRequestError(`x_orientation must be one of ${ORIENTATIONS.join(', ')}`);
  }
  return {
    orientation: orientation as Orientation,
    select: columnList(builtins.x_select),
    // Never past MAX_RESULT_ROWS, the default either (the document says so: openapi/selection-schemas.ts).
    limit: wholeNumber('x_limit', builtins.x_limit, Math.min(DEFAULT_LIMIT, maxRows), maxRows),
    offset: wholeNumber('x_offset', builtins.x_offset, 0, Number.MAX_SAFE_INTEGER),
  };
}
