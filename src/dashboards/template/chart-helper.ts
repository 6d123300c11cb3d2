import { escapeHtml } from '@/http/html';
import { formatValue, toNumber } from '@/dashboards/template/formats';
import {
  HelperData,
  HelperError,
  checkColumn,
  formatsOption,
  helperData,
  helperOptions,
  isRecord,
  labelOf,
  panelHeading,
  scriptJson,
  sizeClass,
  stringOption,
} from '@/dashboards/template/helper-input';

/** Tableau 10: distinguishable, also in print and for the common colour-vision deficiencies. */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];

const TYPES = ['line', 'bar', 'pie', 'doughnut'] as const;
type ChartType = (typeof TYPES)[number];

interface ChartSpec {
  type: ChartType;
  x: string;
  y: string[];
  horizontal: boolean;
  stacked: boolean;
  colorBy?: string;
}

/**
 * `chart(rows, { type, x, y, ... })`: a panel with a Chart.js chart. The Chart.js configuration is built
 * here, as JSON (no functions), and drawn by the page's script, so a template never writes JavaScript.
 */
export function chartHtml(data: unknown, ...args: unknown[]): string {
  const input = helperData('chart', data);
  const options = helperOptions('chart', args);
  const spec = chartSpec(input, options);
  const heading = panelHeading(options, 'chart');
  const size = sizeClass('chart', options);
  const label = stringOption('chart', options, 'title') ?? `${spec.y.join(', ')} by ${spec.x}`;
  if (input.rows.length === 0) {
    const empty = stringOption('chart', options, 'empty') ?? 'No data for these selections.';
    return `<section class="panel chart-panel ${size}">${heading}<p class="empty">${escapeHtml(empty)}</p></section>`;
  }
  const height = chartHeight(spec, input.rows.length, options.height);
  const { config, legend } = chartConfig(spec, input, options);
  return (
    `<section class="panel chart-panel ${size}">${heading}` +
    `<div class="chart-box" style="height:${height}px"><canvas role="img" aria-label="${escapeHtml(label)}"></canvas></div>` +
    `<script type="application/json" class="drey-chart">${scriptJson(config)}</script>` +
    legend +
    `</section>`
  );
}

function chartSpec(input: HelperData, options: Record<string, unknown>): ChartSpec {
  const type = options.type ?? 'bar';
  if (!TYPES.includes(type as ChartType)) {
    throw new HelperError(`chart(): type must be one of ${TYPES.join(', ')}`);
  }
  const x = stringOption('chart', options, 'x');
  if (!x) throw new HelperError('chart(): x must name the column of labels');
  const rawY = options.y;
  const y = typeof rawY === 'string' ? [rawY] : Array.isArray(rawY) ? rawY : [];
  if (y.length === 0 || !y.every((name) => typeof name === 'string')) {
    throw new HelperError('chart(): y must name the column of values, or be a list of columns');
  }
  const colorBy = stringOption('chart', options, 'colorBy');
  [x, ...y, ...(colorBy ? [colorBy] : [])].forEach((c) => checkColumn('chart', input, c));
  return {
    type: type as ChartType,
    x,
    y,
    horizontal: options.horizontal === true,
    stacked: options.stacked === true,
    colorBy,
  };
}

function chartHeight(spec: ChartSpec, rows: number, given: unknown): number {
  if (typeof given === 'number' && given >= 80 && given <= 2000) return Math.round(given);
  if (given !== undefined) throw new HelperError('chart(): height must be 80 to 2000 pixels');
  // Horizontal bars need room per row to keep their labels readable.
  if (spec.type === 'bar' && spec.horizontal) return Math.max(160, rows * 28 + 56);
  return spec.type === 'pie' || spec.type === 'doughnut' ? 300 : 320;
}

function chartConfig(
  spec: ChartSpec,
  input: HelperData,
  options: Record<string, unknown>,
): { config: object; legend: string } {
  const formats = formatsOption('chart', options);
  const pinned = pinnedColors(options);
  const months = formats[spec.x] === 'month';
  const labels = months
    ? monthLabels(input.rows.map((row) => row[spec.x]))
    : input.rows.map((row) => formatValue(row[spec.x], formats[spec.x] ?? 'text'));
  const values = (column: string) => input.rows.map((row) => toNumber(row[column]));
  const round = spec.type === 'pie' || spec.type === 'doughnut';
  let legend = '';
  const datasets = spec.y.map((column, index) => {
    const color = PALETTE[index % PALETTE.length];
    const base = { label: labelOf(options, column), data: values(column) };
    if (round) return { ...base, backgroundColor: labels.map((_, i) => PALETTE[i % 10]) };
    if (spec.type === 'line') {
      return {
        ...base,
        borderColor: color,
        backgroundColor: `${color}22`,
        fill: spec.y.length === 1 ? 'origin' : false,
        // Smooth, but never overshooting: a curve must not show a dip or a peak the data do not have.
        tension: 0.3,
        cubicInterpolationMode: 'monotone',
        pointRadius: 3,
        borderWidth: 2.5,
      };
    }
    if (spec.colorBy) {
      const { colors, html } = colorsBy(input, spec.colorBy, formats[spec.colorBy], pinned);
      legend = html;
      return { ...base, backgroundColor: colors, borderRadius: 3 };
    }
    return { ...base, backgroundColor: color, borderRadius: 3 };
  });
  const valueAxis = {
    beginAtZero: true,
    stacked: spec.stacked,
    grid: { color: '#e6e8ec' },
    border: { display: false },
  };
  const labelAxis = {
    stacked: spec.stacked,
    grid: { display: false },
    // Month labels are short and carry the year on a second line: they fit without slanting.
    ...(months ? { ticks: { maxRotation: 0, autoSkipPadding: 6 } } : {}),
  };
  const showLegend = round || (spec.y.length > 1 && !spec.colorBy);
  const config = {
    type: spec.type,
    data: { labels, datasets },
    options: {
      locale: 'en-US',
      indexAxis: spec.horizontal ? 'y' : 'x',
      plugins: { legend: { display: showLegend, position: round ? 'right' : 'top' } },
      ...(round
        ? {}
        : {
            scales: spec.horizontal
              ? { x: valueAxis, y: labelAxis }
              : { x: labelAxis, y: valueAxis },
          }),
    },
  };
  return { config, legend };
}

/**
 * `2024-01`, `2024-02`, ... as `Jan` over `2024`, `Feb`, ...: the year is written under the first month and
 * wherever it changes, as on a calendar, instead of on every label.
 */
export function monthLabels(values: unknown[]): (string | string[])[] {
  let year: string | undefined;
  return values.map((value) => {
    const text = formatValue(value, 'month');
    const match = /^(\w{3}) (\d{4})$/.exec(text);
    if (!match) return text;
    if (match[2] === year) return match[1];
    year = match[2];
    return [match[1], match[2]];
  });
}

/**
 * One colour per distinct value of `column`, and its legend. Values get the palette in alphabetical order,
 * so the same set of values is coloured alike in every rendering whatever the rows' order; `colors` pins
 * some values to colours when the set changes with the selections.
 */
function colorsBy(
  input: HelperData,
  column: string,
  format: Parameters<typeof formatValue>[1],
  pinned: Record<string, string>,
): { colors: string[]; html: string } {
  const keys = input.rows.map((row) => formatValue(row[column], format ?? 'text'));
  const distinct = [...new Set(keys)].sort((a, b) => a.localeCompare(b, 'en'));
  const free = PALETTE.filter((color) => !Object.values(pinned).includes(color));
  const colorOf = new Map<string, string>();
  let next = 0;
  for (const key of distinct) {
    colorOf.set(key, pinned[key] ?? free[next++ % free.length] ?? PALETTE[0]);
  }
  const items = distinct
    .map(
      (value) =>
        `<li><span class="swatch" style="background:${colorOf.get(value)}"></span>${escapeHtml(value)}</li>`,
    )
    .join('');
  return { colors: keys.map((key) => colorOf.get(key)!), html: `<ul class="legend">${items}</ul>` };
}

/** `colors: { Food: '#59a14f' }`: CSS hex colours only, since they are written into the page. */
function pinnedColors(options: Record<string, unknown>): Record<string, string> {
  const raw = options.colors;
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new HelperError('chart(): colors must map values to colours');
  for (const [value, color] of Object.entries(raw)) {
    if (typeof color !== 'string' || !/^#[0-9a-f]{3}([0-9a-f]{3})?$/i.test(color)) {
      throw new HelperError(`chart(): the colour of "${value}" must be written #rrggbb`);
    }
  }
  return raw as Record<string, string>;
}
