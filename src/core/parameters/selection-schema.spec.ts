import { WIDGET_TYPES } from '@/core/parameters/parameter-definition';
import { selectionValueSchema } from '@/core/parameters/selection-schema';

describe('selectionValueSchema', () => {
  it('gives each widget the shape the selection reader takes', () => {
    const shapes = Object.fromEntries(WIDGET_TYPES.map((w) => [w, selectionValueSchema(w)]));
    expect(shapes).toEqual({
      single_select: { type: 'string' },
      multi_select: { type: 'array', items: { type: 'string' } },
      date: { type: 'string', format: 'date' },
      date_range: {
        type: 'array',
        items: { type: 'string', format: 'date' },
        minItems: 2,
        maxItems: 2,
      },
      number: { type: 'number' },
      number_range: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 },
      text: { type: 'string' },
    });
  });

  it('lists option ids when there are some, and none for an empty list', () => {
    expect(selectionValueSchema('multi_select', { optionIds: ['a', 'b'] })).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['a', 'b'] },
    });
    expect(selectionValueSchema('single_select', { optionIds: [] })).toEqual({ type: 'string' });
  });

  it('bounds both ends of a range, and takes decimal strings where a body may carry them', () => {
    const bounds = { minimum: 1, maximum: 9 };
    expect(selectionValueSchema('number_range', { bounds }).items).toEqual({
      type: 'number',
      ...bounds,
    });
    expect(selectionValueSchema('number', { decimalStrings: true })).toEqual({
      anyOf: [{ type: 'number' }, { type: 'string' }],
    });
  });
});
