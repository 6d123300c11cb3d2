import { escapeHtml } from '@/http/html';
import {
  ValueFormat,
  decimalsOf,
  formatNumber,
  formatValue,
  toNumber,
} from '@/dashboards/template/formats';
import {
  HelperData,
  HelperError,
  checkColumn,
  columnNames,
  formatsOption,
  helperData,
  helperOptions,
  labelOf,
  panelHeading,
  sizeClass,
  stringOption,
} from '@/dashboards/template/helper-input';

const NUMERIC_TYPES = new Set(['integer', 'number', 'decimal']);
const DEFAULT_MAX_ROWS = 1000;

interface Column {
  name: string;
  label: string;
  format: ValueFormat;
  numeric: boolean;
  decimals: number;
}

/**
 * `table(rows, { columns, labels, format, total, maxRows })`: a panel with a table. Numbers are right-aligned
 * with the same number of decimals down a column; `total` adds a footer row of sums.
 */
export function tableHtml(data: unknown, ...args: unknown[]): string {
  const input = helperData('table', data);
  const options = helperOptions('table', args);
  const columns = tableColumns(input, options);
  const heading = panelHeading(options, 'table');
  const size = sizeClass('table', options);
  if (input.rows.length === 0) {
    const empty = stringOption('table', options, 'empty') ?? 'No rows for these selections.';
    return `<section class="panel table-panel ${size}">${heading}<p class="empty">${escapeHtml(empty)}</p></section>`;
  }
  const maxRows = maxRowsOption(options.maxRows);
  const shown = input.rows.slice(0, maxRows);
  const head = columns.map((c) => `<th${cls(c)} scope="col">${escapeHtml(c.label)}</th>`).join('');
  const body = shown
    .map(
      (row) =>
        '<tr>' +
        columns
          .map(
            (c) =>
              `<td${cls(c)}>${escapeHtml(formatValue(row[c.name], c.format, c.decimals))}</td>`,
          )
          .join('') +
        '</tr>',
    )
    .join('');
  const foot = totalRow(columns, input.rows, options.total);
  const notes: string[] = [];
  if (shown.length < input.rows.length) {
    notes.push(
      `Showing the first ${formatNumber(shown.length, 0)} of ${formatNumber(input.rows.length, 0)} rows.`,
    );
  }
  if (input.truncated) notes.push('The dataset was cut at the service’s row limit.');
  return (
    `<section class="panel table-panel ${size}">${heading}` +
    `<div class="table-wrap"><table class="data"><thead><tr>${head}</tr></thead><tbody>${body}</tbody>${foot}</table></div>` +
    notes.map((note) => `<p class="note">${escapeHtml(note)}</p>`).join('') +
    `</section>`
  );
}

function cls(column: Column): string {
  return column.numeric ? ' class="num"' : '';
}

function tableColumns(input: HelperData, options: Record<string, unknown>): Column[] {
  const wanted = options.columns;
  let names: string[];
  if (wanted === undefined || wanted === null) names = columnNames(input) ?? [];
  else if (Array.isArray(wanted) && wanted.every((c) => typeof c === 'string')) names = wanted;
  else throw new HelperError('table(): columns must be a list of column names');
  names.forEach((name) => checkColumn('table', input, name));
  const formats = formatsOption('table', options);
  const fixed = options.decimals;
  if (fixed !== undefined && !(Number.isInteger(fixed) && (fixed as number) >= 0)) {
    throw new HelperError('table(): decimals must be a whole number');
  }
  return names.map((name) => {
    const format = formats[name] ?? 'auto';
    const numeric =
      (format === 'auto' && isNumericColumn(input, name)) ||
      format === 'number' ||
      format === 'integer';
    const decimals =
      typeof fixed === 'number'
        ? fixed
        : Math.max(0, ...input.rows.map((row) => decimalsOf(row[name])));
    return {
      name,
      label: labelOf(options, name),
      format: numeric ? format : format === 'auto' ? 'text' : format,
      numeric,
      decimals,
    };
  });
}

/** Numeric by the dataset's type when known; otherwise when every value is a JSON number. */
function isNumericColumn(input: HelperData, name: string): boolean {
  const typed = input.columns?.find((c) => c.name === name);
  if (typed) return NUMERIC_TYPES.has(typed.type);
  const values = input.rows.map((row) => row[name]).filter((v) => v !== null && v !== undefined);
  return values.length > 0 && values.every((v) => typeof v === 'number');
}

function maxRowsOption(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_MAX_ROWS;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw > 0) return raw;
  throw new HelperError('table(): maxRows must be a whole number above 0');
}

/** `total: true` sums every numeric column; `total: ['a', 'b']` those columns. */
function totalRow(columns: Column[], rows: Record<string, unknown>[], total: unknown): string {
  if (total === undefined || total === null || total === false) return '';
  let summed: Set<string>;
  if (total === true) summed = new Set(columns.filter((c) => c.numeric).map((c) => c.name));
  else if (Array.isArray(total) && total.every((c) => typeof c === 'string'))
    summed = new Set(total);
  else throw new HelperError('table(): total must be true or a list of columns');
  const cells = columns.map((column, index) => {
    if (summed.has(column.name)) {
      const sum = rows.reduce<number>((acc, row) => acc + (toNumber(row[column.name]) ?? 0), 0);
      return `<td class="num">${escapeHtml(formatNumber(sum, column.decimals))}</td>`;
    }
    return index === 0 ? '<th scope="row">Total</th>' : '<td></td>';
  });
  return `<tfoot><tr>${cells.join('')}</tr></tfoot>`;
}
