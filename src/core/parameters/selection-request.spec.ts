import {
  SelectionReading,
  checkAtMostOneSelection,
  countOwnSelections,
  emptyParameterRequest,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';

/** A reading whose name rule turns hyphens into underscores, with the lenient forms. */
const SNAKE: SelectionReading = { forms: 'lenient', name: (sent) => sent.replace(/-/g, '_') };

describe('parseQuerySelections', () => {
  it('keeps each selection raw, a repeated name as several values', () => {
    const request = parseQuerySelections({
      category: ['0', '1'],
      group_by: 'day',
      empty: undefined,
    });
    expect(request).toEqual({
      forms: 'strict',
      selections: new Map([
        ['category', { source: 'query', values: ['0', '1'] }],
        ['group_by', { source: 'query', values: ['day'] }],
      ]),
      verifyParams: false,
      parentParam: null,
      builtins: {},
    });
  });

  it('reads x_verify_params and x_parent_param, and keeps other built-ins as sent', () => {
    const request = parseQuerySelections({
      x_verify_params: 'TRUE',
      x_parent_param: 'category',
      x_orientation: 'rows',
      x_select: ['a', 'b'],
    });
    expect(request.verifyParams).toBe(true);
    expect(request.parentParam).toBe('category');
    expect(request.builtins).toEqual({ x_orientation: 'rows', x_select: ['a', 'b'] });
    expect(request.selections.size).toBe(0);
    for (const [text, flag] of [
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      expect(parseQuerySelections({ x_verify_params: text }).verifyParams).toBe(flag);
    }
  });

  it('refuses a malformed built-in as an invalid request', () => {
    expect(() => parseQuerySelections({ x_verify_params: 'yes' })).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: 'x_verify_params must be true or false',
      }),
    );
    expect(() => parseQuerySelections({ x_parent_param: ['a', 'b'] })).toThrow(
      'x_parent_param must be one parameter name',
    );
  });

  it("reads names with the reading's rule, in keys and in x_parent_param, and keeps its forms", () => {
    const request = parseQuerySelections(
      { 'group-by': 'day', 'x-parent-param': 'group-by', 'x-verify-params': 'true' },
      SNAKE,
    );
    expect([...request.selections.keys()]).toEqual(['group_by']);
    expect(request.parentParam).toBe('group_by');
    expect(request.verifyParams).toBe(true);
    expect(request.forms).toBe('lenient');
    // By default names are taken as written.
    expect([...parseQuerySelections({ 'group-by': 'day' }).selections.keys()]).toEqual([
      'group-by',
    ]);
  });

  it('refuses a name given twice once read', () => {
    expect(() => parseQuerySelections({ group_by: 'day', 'group-by': 'cat' }, SNAKE)).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter_selection',
        message: 'Parameter "group_by" is given twice (as "group_by" and "group-by")',
      }),
    );
  });

  it('refuses values that are not text (an extended query parser gives objects)', () => {
    const query = { category: { a: '1' } } as unknown as Record<string, string>;
    expect(() => parseQuerySelections(query)).toThrow(
      'Query parameter "category" must be plain text',
    );
  });
});

describe('parseBodySelections', () => {
  it('keeps JSON values raw and drops nulls', () => {
    const request = parseBodySelections({
      category: ['0'],
      limit: 20,
      group_by: null,
      x_limit: 5,
      x_verify_params: true,
    });
    expect(request.selections).toEqual(
      new Map<string, unknown>([
        ['category', { source: 'body', value: ['0'] }],
        ['limit', { source: 'body', value: 20 }],
      ]),
    );
    expect(request.builtins).toEqual({ x_limit: 5 });
    expect(request.verifyParams).toBe(true);
  });

  it('takes a missing body as no selections and refuses a body that is not an object', () => {
    expect(parseBodySelections(undefined, SNAKE)).toEqual(emptyParameterRequest('lenient'));
    for (const body of [[], 'text', 3]) {
      expect(() => parseBodySelections(body)).toThrow(
        expect.objectContaining({ code: 'invalid_request' }),
      );
    }
  });

  it('keeps a key named __proto__ as a plain selection', () => {
    const request = parseBodySelections(JSON.parse('{"__proto__": "x"}'));
    expect(request.selections.get('__proto__')).toEqual({ source: 'body', value: 'x' });
  });
});

describe('counting selections', () => {
  const names = ['group_by', 'limit'];

  it('counts only the endpoint own parameters', () => {
    const request = parseQuerySelections({ group_by: 'day', limit: '10', other: 'x' });
    expect(countOwnSelections(request, names)).toBe(2);
    expect(countOwnSelections(request, ['group_by'])).toBe(1);
  });

  it('allows one selection at most when asked to', () => {
    const one = parseQuerySelections({ group_by: 'day', other: 'x' });
    expect(() => checkAtMostOneSelection(one, names)).not.toThrow();
    const two = parseQuerySelections({ group_by: 'day', limit: '10' });
    expect(() => checkAtMostOneSelection(two, names)).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter_selection',
        message:
          'A parameters request takes at most one parameter selection; got 2 (group_by, limit)',
      }),
    );
  });
});
