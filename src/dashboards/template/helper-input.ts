import { escapeHtml } from '@/http/html';
import type { ColumnType } from '@/core/project/project';
import { ValueFormat, isValueFormat } from '@/dashboards/template/formats';

/** What `dataset()` gives a template. */
export interface TemplateDataset {
  rows: Record<string, unknown>[];
  columns: { name: string; type: ColumnType }[];
  truncated: boolean;
}

/** A helper was called wrongly; the message says how, and the renderer adds the template's file and line. */
export class HelperError extends Error {}

/** Rows and, when the template passed a `dataset()` result itself, its column types. */
export interface HelperData {
  rows: Record<string, unknown>[];
  columns: TemplateDataset['columns'] | null;
  truncated: boolean;
}

export function helperData(helper: string, data: unknown): HelperData {
  if (Array.isArray(data)) return { rows: data.filter(isRecord), columns: null, truncated: false };
  if (isRecord(data) && Array.isArray(data.rows)) {
    return {
      rows: data.rows.filter(isRecord),
      columns: Array.isArray(data.columns) ? (data.columns as TemplateDataset['columns']) : null,
      truncated: data.truncated === true,
    };
  }
  throw new HelperError(`${helper}(): the first argument must be rows or a dataset() result`);
}

/**
 * A helper's options: an object (`chart(rows, { x: 'month' })`) and/or Nunjucks keyword arguments
 * (`chart(rows, x='month')`, which Nunjucks passes as a last object marked `__keywords`).
 */
export function helperOptions(helper: string, args: unknown[]): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const arg of args) {
    if (arg === undefined || arg === null) continue;
    if (!isRecord(arg)) throw new HelperError(`${helper}(): options must be an object`);
    for (const [key, value] of Object.entries(arg)) if (key !== '__keywords') options[key] = value;
  }
  return options;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The column names a helper may use: the dataset's, or the first row's keys. */
export function columnNames(data: HelperData): string[] | null {
  if (data.columns) return data.columns.map((c) => c.name);
  return data.rows.length > 0 ? Object.keys(data.rows[0]) : null;
}

/** Names a missing column, unless nothing is known yet (empty rows of a first rendering pass). */
export function checkColumn(helper: string, data: HelperData, column: string): void {
  const names = columnNames(data);
  if (names && !names.includes(column)) {
    throw new HelperError(
      `${helper}(): no column "${column}" in the rows (they have ${names.join(', ') || 'none'})`,
    );
  }
}

export function stringOption(helper: string, options: Record<string, unknown>, key: string) {
  const value = options[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HelperError(`${helper}(): ${key} must be text`);
  return value;
}

export function formatsOption(
  helper: string,
  options: Record<string, unknown>,
): Record<string, ValueFormat> {
  const raw = options.format;
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new HelperError(`${helper}(): format must map columns to formats`);
  const formats: Record<string, ValueFormat> = {};
  for (const [column, format] of Object.entries(raw)) {
    if (!isValueFormat(format)) {
      throw new HelperError(
        `${helper}(): format of "${column}" must be one of auto, text, integer, number, month, date`,
      );
    }
    formats[column] = format;
  }
  return formats;
}

/** Column labels: given ones, else the name in words (`total_amount` → `Total amount`). */
export function labelOf(options: Record<string, unknown>, column: string): string {
  const labels = options.labels;
  if (isRecord(labels) && typeof labels[column] === 'string') return labels[column];
  const words = column.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const SIZES = { full: 12, half: 6, third: 4, quarter: 3 } as const;

/** The panel's width on the page's 12-column grid. */
export function sizeClass(helper: string, options: Record<string, unknown>): string {
  const size = options.size ?? 'full';
  if (typeof size !== 'string' || !(size in SIZES)) {
    throw new HelperError(`${helper}(): size must be full, half, third or quarter`);
  }
  return `span-${SIZES[size as keyof typeof SIZES]}`;
}

/** JSON that can sit inside a `<script>` element: no `</script>`, no `<!--`, no line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The panel title and an optional line under it. */
export function panelHeading(options: Record<string, unknown>, helper: string): string {
  const title = stringOption(helper, options, 'title');
  const subtitle = stringOption(helper, options, 'subtitle');
  return (
    (title ? `<h2>${escapeHtml(title)}</h2>` : '') +
    (subtitle ? `<p class="subtitle">${escapeHtml(subtitle)}</p>` : '')
  );
}
