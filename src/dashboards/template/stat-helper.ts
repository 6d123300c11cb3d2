import { escapeHtml } from '@/http/html';
import { decimalsOf, formatValue } from '@/dashboards/template/formats';
import {
  HelperError,
  formatsOption,
  helperOptions,
  sizeClass,
  stringOption,
} from '@/dashboards/template/helper-input';

/**
 * `stat(label, value, { note, format, decimals, size })`: one headline figure. Its default size is a quarter
 * of the page, so four sit in a row.
 */
export function statHtml(label: unknown, value: unknown, ...args: unknown[]): string {
  if (typeof label !== 'string') throw new HelperError('stat(): the first argument is its label');
  const options = helperOptions('stat', args);
  const note = stringOption('stat', options, 'note');
  const format = formatsOption('stat', { format: { value: options.format ?? 'auto' } }).value;
  // Sums computed in a template carry float noise (30226.160000000003): two decimals unless told.
  const decimals =
    typeof options.decimals === 'number' ? options.decimals : Math.min(decimalsOf(value), 2);
  const text = formatValue(value, format, decimals) || '\u2013';
  const size = sizeClass('stat', { size: options.size ?? 'quarter' });
  return (
    `<section class="panel stat ${size}">` +
    `<div class="stat-label">${escapeHtml(label)}</div>` +
    `<div class="stat-value">${escapeHtml(text)}</div>` +
    (note ? `<div class="stat-note">${escapeHtml(note)}</div>` : '') +
    `</section>`
  );
}
