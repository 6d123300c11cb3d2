import {
  checkLegacySelectionCount,
  countOwnSelections,
  emptyParameterRequest,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';

describe('parseQuerySelections', () => {
  it('keeps each selection raw, a repeated name as several values', () => {
    const request = parseQuerySelections(
      { category: ['0', '1'], group_by: 'day', empty: undefined },
      'current',
    );
    expect(request).toEqual({
      layout: 'current',
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
    const request = parseQuerySelections(
      {
        x_verify_params: 'TRUE',
        x_parent_param: 'category',
        x_orientation: 'rows',
        x_select: ['a', 'b'],
      },
      'current',
    );
    expect(request.verifyParams).toBe(true);
    expect(request.parentParam).toBe('category');
    expect(request.builtins).toEqual({ x_orientation: 'rows', x_select: ['a', 'b'] });
    expect(request.selections.size).toBe(0);
    for (const [text, flag] of [
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      expect(parseQuerySelections({ x_verify_params: text }, 'current').verifyParams).toBe(flag);
    }
  });

  it('refuses a malformed built-in as an invalid request', () => {
    expect(() => parseQuerySelections({ x_verify_params: 'yes' }, 'current')).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: 'x_verify_params must be true or false',
      }),
    );
    expect(() => parseQuerySelections({ x_parent_param: ['a', 'b'] }, 'current')).toThrow(
      'x_parent_param must be one parameter name',
    );
  });

  it('turns legacy hyphens into underscores, in names and in x_parent_param', () => {
    const request = parseQuerySelections(
      { 'group-by': 'day', 'x-parent-param': 'group-by', 'x-verify-params': 'true' },
      'legacy',
    );
    expect([...request.selections.keys()]).toEqual(['group_by']);
    expect(request.parentParam).toBe('group_by');
    expect(request.verifyParams).toBe(true);
    // The current layout takes names as written.
    expect([...parseQuerySelections({ 'group-by': 'day' }, 'current').selections.keys()]).toEqual([
      'group-by',
    ]);
  });

  it('refuses a legacy name given with and without hyphens', () => {
    expect(() => parseQuerySelections({ group_by: 'day', 'group-by': 'cat' }, 'legacy')).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter_selection',
        message: 'Parameter "group_by" is given twice (as "group_by" and "group-by")',
      }),
    );
  });

  it('refuses values that are not text (an extended query parser gives objects)', () => {
    const query = { category: { a: '1' } } as unknown as Record<string, string>;
    expect(() => parseQuerySelections(query, 'current')).toThrow(
      'Query parameter "category" must be plain text',
    );
  });
});

describe('parseBodySelections', () => {
  it('keeps JSON values raw and drops nulls', () => {
    const request = parseBodySelections(
      { category: ['0'], limit: 20, group_by: null, x_limit: 5, x_verify_params: true },
      'current',
    );
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
    expect(parseBodySelections(undefined, 'legacy')).toEqual(emptyParameterRequest('legacy'));
    for (const body of [[], 'text', 3]) {
      expect(() => parseBodySelections(body, 'current')).toThrow(
        expect.objectContaining({ code: 'invalid_request' }),
      );
    }
  });

  it('keeps a key named __proto__ as a plain selection', () => {
    const request = parseBodySelections(JSON.parse('{"__proto__": "x"}'), 'current');
    expect(request.selections.get('__proto__')).toEqual({ source: 'body', value: 'x' });
  });
});

describe('counting selections', () => {
  const names = ['group_by', 'limit'];

  it('counts only the endpoint own parameters', () => {
    const request = parseQuerySelections({ group_by: 'day', limit: '10', other: 'x' }, 'legacy');
    expect(countOwnSelections(request, names)).toBe(2);
    expect(countOwnSelections(request, ['group_by'])).toBe(1);
  });

  it('allows the legacy parameters endpoints one selection at most', () => {
    const one = parseQuerySelections({ group_by: 'day', other: 'x' }, 'legacy');
    expect(() => checkLegacySelectionCount(one, names)).not.toThrow();
    const two = parseQuerySelections({ group_by: 'day', limit: '10' }, 'legacy');
    expect(() => checkLegacySelectionCount(two, names)).toThrow(
      expect.objectContaining({
        code: 'invalid_parameter_selection',
        message:
          'A parameters request takes at most one parameter selection; got 2 (group_by, limit)',
      }),
    );
  });
});
