import { parseResultOptions } from '@/datasets/results/result-options';
import { shapeResult } from '@/datasets/results/result-shape';
import { MONTHLY_FIELDS, MONTHLY_RESULT } from '@/datasets/results/__fixtures__/monthly-result';

const RESULT = MONTHLY_RESULT;
const FIELDS = MONTHLY_FIELDS;

describe('parseResultOptions', () => {
  it('applies the defaults', () => {
    expect(parseResultOptions({}, 100000)).toEqual({
      orientation: 'records',
      select: [],
      limit: 1000,
      offset: 0,
    });
    // Below 1000 rows, MAX_RESULT_ROWS is the default: the default was 1000, past the maximum.
    expect(parseResultOptions({}, 500).limit).toBe(500);
  });
  it('reads GET strings and POST values alike', () => {
    const get = parseResultOptions(
      { x_orientation: 'rows', x_limit: '2', x_offset: '1', x_select: ['a', 'b'] },
      10,
    );
    const post = parseResultOptions(
      { x_orientation: 'rows', x_limit: 2, x_offset: 1, x_select: ['a', 'b'] },
      10,
    );
    expect(get).toEqual(post);
    expect(parseResultOptions({ x_select: 'a' }, 10).select).toEqual(['a']);
  });
  it.each([
    [{ x_orientation: 'sideways' }, 'x_orientation must be one of records, rows, columns'],
    [{ x_limit: '-1' }, 'x_limit must be a whole number from 0 up'],
    [{ x_limit: '11' }, 'x_limit must be at most 10'],
    [{ x_limit: 1.5 }, 'x_limit must be a whole number'],
    [{ x_offset: 'x' }, 'x_offset must be a whole number'],
    [{ x_limit: ['1', '2'] }, 'x_limit must be given once'],
  ])('refuses %j', (builtins, message) => {
    expect(() => parseResultOptions(builtins, 10)).toThrow(message);
  });
});

describe('shapeResult', () => {
  const options = { orientation: 'records' as const, select: [], limit: 1000, offset: 0 };
  it('carries the same values in the three orientations', () => {
    expect(shapeResult(RESULT, FIELDS, options).data).toEqual([
      { month: '2024-12', total_amount: 2124.97 },
      { month: '2024-11', total_amount: 2664.21 },
      { month: '2024-10', total_amount: 2320.8 },
    ]);
    expect(shapeResult(RESULT, FIELDS, { ...options, orientation: 'rows' }).data).toEqual(
      RESULT.rows,
    );
    expect(shapeResult(RESULT, FIELDS, { ...options, orientation: 'columns' }).data).toEqual({
      month: ['2024-12', '2024-11', '2024-10'],
      total_amount: [2124.97, 2664.21, 2320.8],
    });
  });
  it('pages after counting and selects columns in the order asked', () => {
    const shaped = shapeResult(RESULT, FIELDS, {
      ...options,
      select: ['total_amount'],
      offset: 1,
      limit: 1,
    });
    expect(shaped.total_num_rows).toBe(3);
    expect(shaped.data_details).toEqual({ num_rows: 1, orientation: 'records' });
    expect(shaped.data).toEqual([{ total_amount: 2664.21 }]);
    expect(shaped.schema.fields.map((f) => f.name)).toEqual(['total_amount']);
    expect(shapeResult(RESULT, FIELDS, { ...options, limit: 0 }).data).toEqual([]);
  });
  it('refuses an unknown x_select column', () => {
    expect(() => shapeResult(RESULT, FIELDS, { ...options, select: ['nope'] })).toThrow(
      'unknown column "nope"',
    );
  });
  it('fills description, category and condition', () => {
    expect(FIELDS).toEqual([
      { name: 'month', type: 'string', description: 'Month', category: 'dimension', condition: '' },
      { name: 'total_amount', type: 'decimal', description: '', category: 'misc', condition: '' },
    ]);
  });
});
