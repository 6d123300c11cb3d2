import { csvLine, ndjsonLine, negotiateFormat } from '@/datasets/results/stream-formats';

describe('negotiateFormat', () => {
  it.each([
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['text/csv', 'csv'],
    ['text/csv; charset=utf-8', 'csv'],
    ['application/x-ndjson', 'ndjson'],
    ['application/json, text/csv', 'json'],
    ['text/html, text/csv;q=0.9', 'csv'],
  ])('reads %s as %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});

describe('csvLine', () => {
  it('quotes only what needs it, doubling quotes, and leaves NULL empty', () => {
    expect(csvLine(['plain', 'a,b', 'say "hi"', 'two\nlines', null, 3.5, true, ''])).toBe(
      'plain,"a,b","say ""hi""","two\nlines",,3.5,true,\r\n',
    );
  });
});

describe('ndjsonLine', () => {
  it('writes one JSON object per line', () => {
    expect(ndjsonLine(['a', 'b'], ['x\ny', null])).toBe('{"a":"x\\ny","b":null}\n');
  });
});
