import {
  chooseCsvFormulas,
  chooseFormat,
  csvLine,
  ndjsonLine,
  negotiateFormat,
} from '@/datasets/results/stream-formats';
import { InvalidRequestError, NotAcceptableError } from '@/core/errors';

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
    // Quality values weigh: the highest served one wins, whatever the order.
    ['application/json;q=0.5, text/csv', 'csv'],
    ['text/csv;q=0.4, application/x-ndjson;q=0.8, */*;q=0.1', 'ndjson'],
    ['text/csv;q=0.5, */*;q=0.9', 'json'],
    // At equal quality a named type comes before a range; then the first listed.
    ['*/*, text/csv', 'csv'],
    ['text/csv, application/x-ndjson', 'csv'],
    // What a browser sends when a link is followed: its range means JSON.
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
    ['application/*', 'json'],
    ['text/*', 'csv'],
    // q=0 refuses; a quality that does not read is no acceptance either.
    ['text/csv;q=0, application/json;q=0.2', 'json'],
    ['', 'json'],
    ['application/xml', undefined],
    ['text/plain, image/png', undefined],
    ['application/json;q=0', undefined],
    ['application/json;q=2', undefined],
    ['application/vnd.apache.parquet', 'parquet'],
    ['application/vnd.apache.arrow.stream;q=0.9, application/json;q=0.5', 'arrow'],
    ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
    // The Arrow file format (random access) is not served: only the stream.
    ['application/vnd.apache.arrow.file', undefined],
  ])('reads %j as %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});

describe('chooseFormat', () => {
  it('takes x_format over Accept, as a download', () => {
    expect(chooseFormat('csv', 'json')).toEqual({ format: 'csv', named: true });
    expect(chooseFormat(['ndjson'], undefined)).toEqual({ format: 'ndjson', named: true });
    expect(chooseFormat('json', 'csv')).toEqual({ format: 'json', named: true });
  });

  it('takes what Accept asked without x_format', () => {
    expect(chooseFormat(undefined, 'csv')).toEqual({ format: 'csv', named: false });
    expect(chooseFormat('', 'json')).toEqual({ format: 'json', named: false });
  });

  it('refuses with a 406 listing what it serves an x_format or an Accept it cannot serve', () => {
    for (const [xFormat, accepted] of [
      ['xml', 'json'],
      ['PARQUET', 'json'],
      [['csv', 'json'], 'json'],
      [3, 'json'],
      [undefined, undefined],
    ] as const) {
      let error: unknown;
      try {
        chooseFormat(xFormat, accepted);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(NotAcceptableError);
      expect((error as Error).message).toMatch(
        /json, csv, ndjson, parquet, arrow, xlsx \(x_format\).*text\/csv/,
      );
    }
  });
});

describe('chooseFormat, given a huge x_format', () => {
  it('echoes the start of it only: a 406 body stays small whatever was sent', () => {
    const sent = 'x'.repeat(100_000);
    let message = '';
    try {
      chooseFormat(sent, 'json');
    } catch (error) {
      expect(error).toBeInstanceOf(NotAcceptableError);
      message = (error as Error).message;
    }
    expect(message).toContain('(100000 characters)');
    expect(message.length).toBeLessThan(500);
  });
});

describe('csvLine', () => {
  it('quotes only what needs it, doubling quotes, and leaves NULL empty', () => {
    expect(csvLine(['plain', 'a,b', 'say "hi"', 'two\nlines', null, 3.5, true, ''])).toBe(
      'plain,"a,b","say ""hi""","two\nlines",,3.5,true,\r\n',
    );
  });

  it('escapes the text columns it is told of, NULL still empty, numbers as they are', () => {
    expect(csvLine(['-2+3', -2, null, '-2', ['=1']], [true, false, true, false, true])).toBe(
      '"\'-2+3",-2,,-2,"[""=1""]"\r\n',
    );
  });
});

describe('chooseCsvFormulas', () => {
  it('is escaped unless raw is asked, once', () => {
    expect([undefined, null, '', ['escaped'], 'escaped'].map(chooseCsvFormulas)).toEqual([
      'escaped',
      'escaped',
      'escaped',
      'escaped',
      'escaped',
    ]);
    expect(chooseCsvFormulas('raw')).toBe('raw');
    expect(chooseCsvFormulas(['raw'])).toBe('raw');
  });

  it('refuses anything else with a 400 that names the values', () => {
    for (const wrong of ['RAW', 'none', 'escaped ', ['raw', 'raw'], true, 1, { raw: true }]) {
      let error: unknown;
      try {
        chooseCsvFormulas(wrong);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as Error).message).toMatch(/^x_csv_formulas must be escaped or raw/);
    }
  });
});

describe('ndjsonLine', () => {
  it('writes one JSON object per line', () => {
    expect(ndjsonLine(['a', 'b'], ['x\ny', null])).toBe('{"a":"x\\ny","b":null}\n');
  });
});
