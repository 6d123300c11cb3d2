import { parseResultOptions } from '@/datasets/results/result-options';
import type { CachedRun } from '@/datasets/results/result-codec';
import { pageJson, wholeJson, WHOLE_PAGE_ROWS } from '@/datasets/results/result-json';
import { checkSelect, schemaFields, shapeResult } from '@/datasets/results/result-shape';
import { legacyResult } from '@/legacy/datasets';
import type { QueryResult } from '@/engine/sql/query-result';

function bigRun(rows: number): CachedRun {
  const result: QueryResult = {
    columns: [
      { name: 'n', type: 'integer', databaseType: 'BIGINT' },
      { name: 'label', type: 'string', databaseType: 'VARCHAR' },
    ],
    rows: Array.from({ length: rows }, (_, i) => [i, i % 3 === 0 ? null : `row "${i}"`]),
    truncated: false,
  };
  return {
    result,
    fields: schemaFields(result, [{ name: 'n', description: 'N', category: 'dimension' }]),
  };
}

function text(json: string | Iterable<string>): string {
  return typeof json === 'string' ? json : [...json].join('');
}

describe('pageJson', () => {
  const run = bigRun(WHOLE_PAGE_ROWS * 2 + 17);

  it.each(['records', 'rows', 'columns'])(
    'writes a large %s page in pieces with the bytes JSON.stringify gives',
    (orientation) => {
      const options = parseResultOptions(
        { x_orientation: orientation, x_limit: String(WHOLE_PAGE_ROWS + 1500), x_offset: '3' },
        100000,
      );
      const json = pageJson(run, options);
      expect(typeof json).not.toBe('string');
      expect(text(json)).toBe(JSON.stringify(shapeResult(run.result, run.fields, options)));
    },
  );

  it('keeps x_select in pieces, and serialises a small page whole', () => {
    const options = parseResultOptions({ x_select: 'label', x_limit: '100000' }, 100000);
    expect(text(pageJson(run, options))).toBe(
      JSON.stringify(shapeResult(run.result, run.fields, options)),
    );
    const small = parseResultOptions({ x_limit: '10' }, 100000);
    expect(pageJson(run, small)).toBe(JSON.stringify(shapeResult(run.result, run.fields, small)));
  });

  it.each([
    ['records', 3, 10],
    ['columns', 9000, WHOLE_PAGE_ROWS + 900],
    ['rows', 1000, 0],
  ])(
    'answers a %s page of a large result from that page alone, as from the whole (offset %d, limit %d)',
    (orientation, offset, limit) => {
      const options = parseResultOptions(
        { x_orientation: orientation, x_offset: String(offset), x_limit: String(limit) },
        100000,
      );
      const total = run.result.rows.length;
      const held = run.result.rows.slice(offset, offset + limit);
      const page = { ...run, result: { ...run.result, rows: held } };
      const json = JSON.parse(text(pageJson(page, options, { offset, total })));
      expect(json).toEqual(JSON.parse(text(pageJson(run, options))));
      expect(json.total_num_rows).toBe(total);
    },
  );

  it('answers a page past the end with no rows and the true total', () => {
    const options = parseResultOptions({ x_offset: '5000000', x_limit: '10' }, 100000);
    const empty = { ...run, result: { ...run.result, rows: [] } };
    const json = JSON.parse(text(pageJson(empty, options, { offset: 0, total: 2_000_000 })));
    expect(json).toMatchObject({ total_num_rows: 2_000_000, data: [] });
    expect(json.data_details.num_rows).toBe(0);
  });

  it('refuses an unknown column before writing anything', () => {
    const options = parseResultOptions({ x_select: 'nope', x_limit: '100000' }, 100000);
    expect(() => pageJson(run, options)).toThrow('unknown column "nope"');
  });
});

describe('checkSelect', () => {
  // A large result's summary: its columns and row count, no rows.
  const summary = { ...bigRun(0), total: 2_000_000 };

  it('refuses an unknown column from the columns alone, as pageJson does', () => {
    const options = parseResultOptions({ x_select: ['n', 'nope'], x_offset: '1999990' }, 100000);
    expect(() => checkSelect(summary, options.select)).toThrow(
      'x_select names an unknown column "nope"',
    );
    expect(() => pageJson(bigRun(10), options)).toThrow('x_select names an unknown column "nope"');
  });

  it.each(['records', 'rows', 'columns'])('accepts known columns in %s', (orientation) => {
    const options = parseResultOptions(
      { x_select: ['label', 'n'], x_orientation: orientation, x_offset: '1999990' },
      100000,
    );
    expect(() => checkSelect(summary, options.select)).not.toThrow();
    expect(() => checkSelect(summary, parseResultOptions({}, 100000).select)).not.toThrow();
  });
});

describe('wholeJson', () => {
  it('writes every row in pieces with the same bytes', () => {
    const run = bigRun(WHOLE_PAGE_ROWS + 1);
    expect(text(wholeJson(run))).toBe(JSON.stringify(legacyResult(run.result, run.fields)));
  });
});
