import { chartHtml, monthLabels } from '@/dashboards/template/chart-helper';
import { formatValue } from '@/dashboards/template/formats';
import { HelperError } from '@/dashboards/template/helper-input';
import { statHtml } from '@/dashboards/template/stat-helper';
import { tableHtml } from '@/dashboards/template/table-helper';

const ROWS = [
  { month: '2024-01', total_amount: 2484.43 },
  { month: '2024-02', total_amount: 2320.8 },
  { month: '2025-01', total_amount: 12 },
];

function chartConfig(html: string): any {
  const json = /<script type="application\/json" class="drey-chart">(.*?)<\/script>/s.exec(html);
  if (!json) throw new Error(`no chart in ${html}`);
  return JSON.parse(json[1]);
}

describe('formatValue', () => {
  it.each([
    [2320.8, 'auto', 2, '2,320.80'],
    ['123456789012345678.25', 'number', 2, '123,456,789,012,345,680.00'],
    [1234, 'integer', 2, '1,234'],
    ['2024-03', 'month', 2, 'Mar 2024'],
    ['2024-03-05', 'date', 2, '5 Mar 2024'],
    ['2024-13', 'month', 2, '2024-13'],
    [null, 'auto', 2, ''],
    [Infinity, 'auto', 2, ''],
    ['Groceries', 'auto', 2, 'Groceries'],
  ] as const)('%p as %s', (value, format, decimals, expected) => {
    expect(formatValue(value, format, decimals)).toBe(expected);
  });
});

describe('chart()', () => {
  it('builds a Chart.js configuration as JSON: labels, values, series names, axes', () => {
    const config = chartConfig(
      chartHtml(ROWS, { type: 'line', x: 'month', y: 'total_amount', __keywords: true }),
    );
    expect(config.type).toBe('line');
    expect(config.data.labels).toEqual(['2024-01', '2024-02', '2025-01']);
    expect(config.data.datasets).toMatchObject([
      { label: 'Total amount', data: [2484.43, 2320.8, 12], cubicInterpolationMode: 'monotone' },
    ]);
    expect(config.options.scales.y.beginAtZero).toBe(true);
  });

  it('writes months as a calendar does: the year under the first month and where it changes', () => {
    expect(monthLabels(['2024-11', '2024-12', '2025-01', 'other'])).toEqual([
      ['Nov', '2024'],
      'Dec',
      ['Jan', '2025'],
      'other',
    ]);
  });

  it('colours bars by a column, the same value the same colour whatever the row order, with a legend', () => {
    const rows = [
      { sub: 'Fuel', cat: 'Transportation', v: 3 },
      { sub: 'Groceries', cat: 'Food', v: 2 },
      { sub: 'Transit', cat: 'Transportation', v: 1 },
    ];
    const html = chartHtml(rows, { x: 'sub', y: 'v', colorBy: 'cat', horizontal: true });
    const colors = chartConfig(html).data.datasets[0].backgroundColor as string[];
    expect(colors[0]).toBe(colors[2]);
    expect(colors[0]).not.toBe(colors[1]);
    const reversed = chartConfig(
      chartHtml([...rows].reverse(), { x: 'sub', y: 'v', colorBy: 'cat' }),
    );
    expect(reversed.data.datasets[0].backgroundColor[2]).toBe(colors[0]);
    expect(html).toMatch(/<ul class="legend"><li>.*Food<\/li><li>.*Transportation<\/li><\/ul>/);
    expect(chartConfig(html).options.indexAxis).toBe('y');
  });

  it('keeps data inside its script element: a value holding </script> cannot end it', () => {
    const html = chartHtml([{ name: '</script><script>alert(1)</script>', v: 1 }], {
      x: 'name',
      y: 'v',
      title: '<b>Title</b>',
    });
    expect(html).not.toContain('</script><script>');
    expect(html).toContain('<h2>&lt;b&gt;Title&lt;/b&gt;</h2>');
    expect(chartConfig(html).data.labels).toEqual(['</script><script>alert(1)</script>']);
  });

  it('says so when there are no rows, and explains a wrong call', () => {
    expect(chartHtml([], { x: 'month', y: 'total' })).toContain('No data for these selections.');
    expect(() => chartHtml(ROWS, { x: 'month', y: 'total' })).toThrow(
      new HelperError('chart(): no column "total" in the rows (they have month, total_amount)'),
    );
    expect(() => chartHtml(ROWS, { type: 'radar', x: 'month', y: 'total_amount' })).toThrow(
      /type must be one of line, bar, pie, doughnut/,
    );
    expect(() => chartHtml(ROWS, { x: 'month', y: 'total_amount', colors: { a: 'red' } })).toThrow(
      /must be written #rrggbb/,
    );
  });
});

describe('table()', () => {
  it('right-aligns numbers with as many decimals as the column needs, and sums them', () => {
    const html = tableHtml(ROWS, {
      format: { month: 'month' },
      total: true,
      labels: { month: 'Month' },
    });
    expect(html).toContain(
      '<th scope="col">Month</th><th class="num" scope="col">Total amount</th>',
    );
    expect(html).toContain('<tr><td>Jan 2024</td><td class="num">2,484.43</td></tr>');
    expect(html).toContain('<td class="num">2,320.80</td>');
    expect(html).toContain(
      '<tfoot><tr><th scope="row">Total</th><td class="num">4,817.23</td></tr></tfoot>',
    );
  });

  it('uses the dataset’s types when given a dataset() result, and limits long tables', () => {
    const result = {
      rows: [{ id: '1' }, { id: '2' }, { id: '3' }],
      columns: [{ name: 'id', type: 'decimal' }],
      truncated: true,
    };
    const html = tableHtml(result, { maxRows: 2 });
    expect(html).toContain('<td class="num">1</td>');
    expect(html).not.toContain('<td class="num">3</td>');
    expect(html).toContain('Showing the first 2 of 3 rows.');
    expect(html).toContain('cut at the service’s row limit');
  });

  it('escapes every cell', () => {
    expect(tableHtml([{ a: '<img src=x onerror=alert(1)>' }])).toContain(
      '<td>&lt;img src=x onerror=alert(1)&gt;</td>',
    );
  });
});

describe('stat()', () => {
  it('prints a figure with two decimals at most, and a note', () => {
    const html = statHtml('Total spent', 30226.160000000003, { note: 'in 2024' });
    expect(html).toContain('<div class="stat-value">30,226.16</div>');
    expect(html).toContain('<div class="stat-note">in 2024</div>');
    expect(statHtml('Top', undefined)).toContain('<div class="stat-value">–</div>');
  });
});
