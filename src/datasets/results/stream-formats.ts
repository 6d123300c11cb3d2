import { shown } from '@/core/parameters/raw-values';
import { InvalidRequestError, NotAcceptableError } from '@/core/errors';
import {
  CSV_FORMULAS,
  CsvFormulas,
  EXPORT_MEDIA_TYPES,
  FORMATS,
  ResultFormat,
} from '@/core/result-builtins';
import { escapedCsvText } from '@/engine/export/csv-cells';
import { mediaType } from '@/http/input/media-type';
import type { JsonValue } from '@/engine/sql/query-result';

export type { ResultFormat };

export const CONTENT_TYPES: Record<ResultFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  ndjson: EXPORT_MEDIA_TYPES.ndjson.type,
  parquet: EXPORT_MEDIA_TYPES.parquet.type,
  arrow: EXPORT_MEDIA_TYPES.arrow.type,
  xlsx: EXPORT_MEDIA_TYPES.xlsx.type,
};

/** Media ranges of `Accept` and the format each one names; `*\/*` and `application/*` mean JSON. */
const RANGES: Record<string, ResultFormat> = {
  'application/json': 'json',
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  [EXPORT_MEDIA_TYPES.parquet.type]: 'parquet',
  [EXPORT_MEDIA_TYPES.arrow.type]: 'arrow',
  [EXPORT_MEDIA_TYPES.xlsx.type]: 'xlsx',
  'text/*': 'csv',
  'application/*': 'json',
  '*/*': 'json',
};

/** What a 406 lists: the values of `x_format`, and the types `Accept` may name. Worded once, not per request. */
const SERVED = `${FORMATS.join(', ')} (x_format), or by Accept: ${Object.keys(RANGES)
  .filter((range) => !range.endsWith('/*'))
  .join(', ')}`;

/**
 * The format an `Accept` header asks for (RFC 9110 §12.5.1): the served format of the highest quality, a
 * named type before a range (`text/*`, `*\/*`) at equal quality, then the first listed; `q=0` refuses. No
 * header is JSON (decisions.md, "Results": `application/json` and `*\/*` mean the ordinary JSON result).
 * Undefined when the header accepts nothing served here: a 406, unless `x_format` says otherwise.
 */
export function negotiateFormat(accept: string | undefined): ResultFormat | undefined {
  if (accept === undefined || accept.trim() === '') return 'json';
  let best: { format: ResultFormat; q: number; named: boolean } | undefined;
  for (const part of accept.split(',')) {
    const type = mediaType(part);
    const format = RANGES[type];
    if (format === undefined) continue;
    const q = quality(part);
    if (q <= 0) continue;
    const named = !type.endsWith('/*');
    if (!best || q > best.q || (q === best.q && named && !best.named)) best = { format, q, named };
  }
  return best?.format;
}

/** The `q` parameter of one `Accept` entry; 1 when absent, 0 when it does not read as a quality. */
function quality(entry: string): number {
  const match = /;\s*q\s*=\s*([0-9.]+)/i.exec(entry);
  if (!match) return 1;
  const q = Number(match[1]);
  return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
}

/**
 * The format of a results request: `x_format` when given (it wins over `Accept`: a link or
 * `pandas.read_csv(url)` cannot set headers), else what `Accept` asked. Throws the 406 that lists what can
 * be served when neither names a served format.
 */
export function chooseFormat(
  xFormat: unknown,
  accepted: ResultFormat | undefined,
): { format: ResultFormat; named: boolean } {
  if (xFormat !== undefined && xFormat !== null && xFormat !== '') {
    const value: unknown = Array.isArray(xFormat) && xFormat.length === 1 ? xFormat[0] : xFormat;
    if (typeof value === 'string' && (FORMATS as readonly string[]).includes(value)) {
      return { format: value as ResultFormat, named: true };
    }
    throw new NotAcceptableError(
      `x_format ${shown(value)} is not served here; results are served as ${SERVED}`,
    );
  }
  if (accepted === undefined) {
    throw new NotAcceptableError(
      `Accept names no format served here; results are served as ${SERVED}`,
    );
  }
  return { format: accepted, named: false };
}

/**
 * `x_csv_formulas` (docs/api.md, "Exports"): how a CSV export writes its text cells; `escaped` unless given.
 * Read whatever the format, so that a wrong value is a 400 wherever it is sent.
 */
export function chooseCsvFormulas(value: unknown): CsvFormulas {
  const given: unknown = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (given === undefined || given === null || given === '') return CSV_FORMULAS[0];
  if (typeof given === 'string' && (CSV_FORMULAS as readonly string[]).includes(given)) {
    return given as CsvFormulas;
  }
  throw new InvalidRequestError(
    `x_csv_formulas must be ${CSV_FORMULAS.join(' or ')} (given once), not ${shown(given)}`,
  );
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; NULL is empty. */
export function csvField(value: JsonValue): string {
  if (value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One CSV record with its CRLF line break. `escape` marks the text columns that `x_csv_formulas=escaped`
 * writes escaped (engine/export/csv-cells.ts); without it, every value is written as stored.
 */
export function csvLine(values: readonly JsonValue[], escape?: readonly boolean[]): string {
  let line = '';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) line += ',';
    const value = values[index];
    line +=
      escape?.[index] && value !== null
        ? escapedCsvText(typeof value === 'string' ? value : JSON.stringify(value))
        : csvField(value);
  }
  return `${line}\r\n`;
}

/** One NDJSON line: the row as an object keyed by column name. */
export function ndjsonLine(names: readonly string[], values: readonly JsonValue[]): string {
  const record: Record<string, JsonValue> = {};
  for (let index = 0; index < names.length; index++) record[names[index]] = values[index];
  return `${JSON.stringify(record)}\n`;
}
