import { legacyResult, legacyResultWants, wholeResultTooLarge } from '@/legacy/datasets';
import { MONTHLY_FIELDS, MONTHLY_RESULT } from '@/datasets/results/__fixtures__/monthly-result';

const RESULT = MONTHLY_RESULT;
const FIELDS = MONTHLY_FIELDS;

describe('legacyResult', () => {
  it('has legacy types, dimensions and every row as a record', () => {
    expect(legacyResult(RESULT, FIELDS)).toEqual({
      schema: {
        fields: [
          { name: 'month', type: 'string' },
          { name: 'total_amount', type: 'number' },
        ],
        dimensions: ['month'],
      },
      data: [
        { month: '2024-12', total_amount: 2124.97 },
        { month: '2024-11', total_amount: 2664.21 },
        { month: '2024-10', total_amount: 2320.8 },
      ],
    });
  });
});

describe('legacyResultWants', () => {
  it('asks every row, in the negotiated format, with the If-None-Match given', () => {
    expect(legacyResultWants('csv', '"abc"')).toEqual({
      format: 'csv',
      shape: 'whole',
      ifNoneMatch: '"abc"',
    });
  });
});

describe('wholeResultTooLarge', () => {
  it('names the figures and the ways to read every row', () => {
    const message = wholeResultTooLarge(120000, 100000);
    expect(message).toContain('The result has 120000 rows');
    expect(message).toContain('(MAX_RESULT_ROWS, 100000)');
    expect(message).toContain('x_offset, x_limit');
  });
});
