import {
  builtInQuery,
  builtInSchemas,
  selectionsBody,
  selectionsQuery,
} from '@/openapi/selection-schemas';
import { parseBodySelections } from '@/core/parameters/selection-request';

describe('the built-ins of each operation', () => {
  it('bound x_limit by MAX_RESULT_ROWS, its default too, and x_offset by the safe integers', () => {
    const { x_limit, x_offset } = builtInSchemas('results', { maxRows: 500 });
    expect(x_limit).toMatchObject({ type: 'integer', minimum: 0, maximum: 500, default: 500 });
    expect(x_offset).toMatchObject({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 });
    // Without the setting (a decorator), documentServerRules writes the maximum later.
    expect(builtInSchemas('results').x_limit).not.toHaveProperty('maximum');
  });

  it("narrow x_select and x_parent_param to an item's columns and parameters, or else to non-empty names", () => {
    expect(builtInSchemas('results', { columns: ['month'] }).x_select.items).toEqual({
      type: 'string',
      enum: ['month'],
    });
    expect(builtInSchemas('results').x_select.items).toEqual({ type: 'string', minLength: 1 });
    expect(builtInSchemas('parameters', { parameters: ['group_by'] }).x_parent_param).toMatchObject(
      { enum: ['group_by'] },
    );
    expect(builtInSchemas('parameters').x_parent_param).toMatchObject({ minLength: 1 });
    // The legacy layout reads an empty trigger as none.
    expect(builtInSchemas('legacyParameters').x_parent_param).not.toHaveProperty('minLength');
  });

  it('are only those the operation reads', () => {
    expect(Object.keys(builtInSchemas('dashboardResults'))).toEqual(['x_verify_params']);
    expect(Object.keys(builtInSchemas('legacyResults'))).toEqual([
      'x_verify_params',
      'x_format',
      'x_csv_formulas',
    ]);
    expect(Object.keys(builtInSchemas('parameters'))).toEqual([
      'x_parent_param',
      'x_verify_params',
    ]);
    const query = builtInQuery(builtInSchemas('results'));
    expect(query.map((parameter) => [parameter.name, parameter.allowEmptyValue ?? false])).toEqual([
      ['x_orientation', false],
      ['x_select', true],
      ['x_limit', true],
      ['x_offset', true],
      ['x_verify_params', false],
      ['x_format', true],
      ['x_csv_formulas', true],
    ]);
    expect(builtInSchemas('results').x_csv_formulas).toMatchObject({
      type: 'string',
      enum: ['escaped', 'raw'],
      default: 'escaped',
    });
  });
});

describe('the selections of a generic path', () => {
  it('are one form/explode query parameter of strings or string arrays', () => {
    expect(selectionsQuery(false)).toMatchObject({
      name: 'selections',
      in: 'query',
      style: 'form',
      explode: true,
      schema: {
        type: 'object',
        additionalProperties: {
          anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
        },
      },
    });
  });

  it("in a current layout's body, are an open map: a name that is no parameter is ignored whatever its value", () => {
    const body = selectionsBody(builtInSchemas('results'), false);
    expect(body.additionalProperties).toBe(true);
    // The service reads such a body: it refuses a bad value of one of the endpoint's parameters only
    // (decisions.md, "Parameters"), so the document may not forbid these.
    for (const value of ['x', 2.5, ['0', 1], null, true, { id: '0' }, [['0']]]) {
      expect(() => parseBodySelections({ not_a_parameter: value })).not.toThrow();
    }
    expect(body.description).toMatch(/a string, a number or an array of those/);
    expect(body.properties?.x_limit).toMatchObject({ type: 'integer', nullable: true });
  });

  it("in a legacy body, are any JSON value: the 0.4 service's clients send many forms", () => {
    expect(selectionsBody(builtInSchemas('legacyResults'), true).additionalProperties).toBe(true);
  });
});
