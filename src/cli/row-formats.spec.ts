import { cellFormatters, csvLine, floatText, tableLines } from '@/cli/row-formats';
import type { ResultColumn } from '@/engine/sql/query-result';

const columns: ResultColumn[] = [
  { name: 'month', type: 'string', databaseType: 'VARCHAR' },
  { name: 'total', type: 'decimal', databaseType: 'DECIMAL(38,2)' },
  { name: 'ratio', type: 'number', databaseType: 'DOUBLE' },
  { name: 'single', type: 'number', databaseType: 'FLOAT' },
];

describe('drey run: decimals and floats as a person reads them', () => {
  it('shows a decimal at its scale and a float without its binary noise in a table', () => {
    const lines = tableLines({
      columns,
      rows: [
        // 2.5 + 5.1 as a DOUBLE; 0.1 as a FLOAT, widened.
        ['2024-10', 2320.8, 7.6000000000000005, 0.10000000149011612],
        ['2024-11', '12345678901234567890.10', 1e-7, 3.4028234663852886e38],
        ['2024-12', 0, null, null],
      ],
    });
    expect(lines).toEqual([
      'month                      total  ratio         single',
      '-------  -----------------------  -----  -------------',
      '2024-10                  2320.80    7.6            0.1',
      '2024-11  12345678901234567890.10   1e-7  3.4028235e+38',
      '2024-12                     0.00   NULL           NULL',
    ]);
  });

  it('writes CSV decimals at their scale, as the CSV export does, and floats with every digit', () => {
    const formats = cellFormatters(columns, 'csv');
    const row = ['2024-10', -0.5, 7.6000000000000005, 0.10000000149011612];
    expect(
      csvLine(
        row.map((value, index) => formats[index](value)),
        [],
      ),
    ).toBe('2024-10,-0.50,7.6000000000000005,0.10000000149011612');
  });

  it('keeps a FLOAT digit that tells it apart', () => {
    expect(floatText(Math.fround(16777217), 'FLOAT')).toBe('16777216');
    expect(floatText(Math.fround(1.1), 'FLOAT')).toBe('1.1');
    expect(floatText(0.30000000000000004, 'DOUBLE')).toBe('0.3');
  });
});
