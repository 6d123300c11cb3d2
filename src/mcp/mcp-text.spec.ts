import { rowsTable } from '@/mcp/mcp-text';

describe('rowsTable', () => {
  it('writes the column names, then a line per row, cells separated by " | "', () => {
    expect(
      rowsTable(
        ['a', 'b'],
        [
          [1, 'x'],
          [2.5, null],
        ],
      ),
    ).toBe('a | b\n1 | x\n2.5 | ');
  });

  it('keeps a cell on its line and in its column', () => {
    expect(rowsTable(['text'], [['one\r\ntwo\nthree | four']])).toBe(
      'text\none two three \\| four',
    );
  });

  it('writes other values as JSON', () => {
    expect(rowsTable(['v'], [[true], [{ a: [1] }], [Number.NaN], [undefined]])).toBe(
      'v\ntrue\n{"a":[1]}\nnull\n',
    );
  });

  it('writes no rows as the header alone', () => {
    expect(rowsTable(['a', 'b'], [])).toBe('a | b');
  });
});
