import { mediaType } from '@/http/input/media-type';
import type { JsonValue } from '@/engine/query/query-result';

/** The formats a dataset result can be asked for with `Accept`. */
export type ResultFormat = 'json' | 'csv' | 'ndjson';

export const CONTENT_TYPES: Record<ResultFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
};

/**
 * The format an `Accept` header asks for: CSV or NDJSON when it names one of them before JSON (or without
 * JSON), JSON otherwise (no header, `*\/*`, `application/json`). Quality values are not weighed: clients
 * that want an export name it.
 */
export function negotiateFormat(accept: string | undefined): ResultFormat {
  if (!accept) return 'json';
  for (const part of accept.split(',')) {
    const type = mediaType(part);
    if (type === 'text/csv') return 'csv';
    if (type === 'application/x-ndjson' || type === 'application/ndjson') return 'ndjson';
    if (type === 'application/json') return 'json';
  }
  return 'json';
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; NULL is empty. */
export function csvField(value: JsonValue): string {
  if (value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record with its CRLF line break. */
export function csvLine(values: readonly JsonValue[]): string {
  let line = '';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) line += ',';
    line += csvField(values[index]);
  }
  return `${line}\r\n`;
}

/** One NDJSON line: the row as an object keyed by column name. */
export function ndjsonLine(names: readonly string[], values: readonly JsonValue[]): string {
  const record: Record<string, JsonValue> = {};
  for (let index = 0; index < names.length; index++) record[names[index]] = values[index];
  return `${JSON.stringify(record)}\n`;
}
