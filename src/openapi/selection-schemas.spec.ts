import type { SchemaObject } from '@nestjs/swagger';
import {
  builtInQuery,
  builtInSchemas,
  selectionsBody,
  selectionsQuery,
} from '@/openapi/selection-schemas';
import { parseBodySelections } from '@/core/parameters/selection-request';

/** Whether a JSON value fits a schema of the few keywords the selections' map uses. */
function fits(schema: SchemaObject, value: unknown): boolean {
  if (value === null) return schema.nullable === true;
  if (schema.anyOf) return schema.anyOf.some((part) => fits(part as SchemaObject, value));
  if (schema.type === 'string') return typeof value === 'string';
  if (schema.type === 'number') return typeof value === 'number';
  if (schema.type === 'array') {
    return Array.isArray(value) && value.every((item) => fits(schema.items as SchemaObject, item));
  }
  throw new Error(`not used by the selections: ${JSON.stringify(schema)}`);
}

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
    expect(Object.keys(builtInSchemas('legacyResults'))).toEqual(['x_verify_params']);
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
    ]);
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

  it("in a current layout's body, take exactly the values the body reader takes", () => {
    const body = selectionsBody(builtInSchemas('results'), false);
    const selection = body.additionalProperties as SchemaObject;
    const values: unknown[] = [
      'x',
      '',
      2.5,
      ['0', 1],
      [],
      null,
      true,
      { id: '0' },
      ['0', null],
      [['0']],
      [true],
    ];
    for (const value of values) {
      let read: boolean;
      try {
        parseBodySelections({ any_name: value });
        read = true;
      } catch {
        read = false;
      }
      expect({ value, documented: fits(selection, value) }).toEqual({ value, documented: read });
    }
    expect(body.properties?.x_limit).toMatchObject({ type: 'integer', nullable: true });
  });

  it("in a legacy body, are any JSON value: the 0.4 service's clients send many forms", () => {
    expect(selectionsBody(builtInSchemas('legacyResults'), true).additionalProperties).toBe(true);
  });
});
