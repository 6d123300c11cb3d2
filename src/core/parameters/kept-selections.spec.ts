import {
  ANONYMOUS,
  EMPLOYEE,
  MANAGER,
  exampleCatalog,
} from '@/core/parameters/__fixtures__/example-parameters';
import {
  KEPT_KEY_MAX_CHARS,
  KEPT_SELECTIONS_MAX,
  KeptSelections,
} from '@/core/parameters/kept-selections';
import type { SelectionValues } from '@/core/parameters/selection-value';
import { emptyParameterRequest, parseQuerySelections } from '@/core/parameters/selection-request';

const NAMES = ['group_by', 'limit', 'category', 'subcategory', 'description_filter'];

describe('selections kept by the catalog', () => {
  it('gives the same frozen objects to the same request and caller group, and evaluates them once', () => {
    const catalog = exampleCatalog();
    const first = catalog.selections(NAMES, parseQuerySelections({ limit: '100' }), MANAGER);
    const again = catalog.selections([...NAMES], parseQuerySelections({ limit: '100' }), {
      ...MANAGER,
      username: 'another manager',
    });
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.group_by)).toBe(true);
    expect(() => {
      (first as Record<string, unknown>).limit = null;
    }).toThrow(TypeError);
    // A fresh catalog, which keeps nothing, evaluates the same.
    expect(
      exampleCatalog().selections(NAMES, parseQuerySelections({ limit: '100' }), MANAGER),
    ).toEqual(first);
  });

  it('tells apart what the cascade reads: the values, the group field, signing in, the endpoint', () => {
    const catalog = exampleCatalog();
    const manager = catalog.selections(NAMES, emptyParameterRequest(), MANAGER);
    const employee = catalog.selections(NAMES, emptyParameterRequest(), EMPLOYEE);
    const anonymous = catalog.selections(NAMES, emptyParameterRequest(), ANONYMOUS);
    // The managers' default grouping is hidden from the others, who get the first option they see.
    expect(manager.group_by).toMatchObject({ selected: { id: 'trans' } });
    expect(employee.group_by).toMatchObject({ selected: { id: 'day' } });
    expect(anonymous.group_by).toMatchObject({ selected: { id: 'day' } });
    expect(catalog.selections(NAMES, emptyParameterRequest(), MANAGER)).toBe(manager);
    // A signed-in caller without the field is not an anonymous one, nor one whose field is null.
    const fieldless = { ...MANAGER, fields: {} };
    const nulled = { ...MANAGER, fields: { role: null } };
    expect(catalog.selections(NAMES, emptyParameterRequest(), fieldless)).not.toBe(anonymous);
    expect(catalog.selections(NAMES, emptyParameterRequest(), nulled)).not.toBe(
      catalog.selections(NAMES, emptyParameterRequest(), fieldless),
    );
    const limit = (query: Record<string, string>) =>
      catalog.selections(NAMES, parseQuerySelections(query), MANAGER).limit;
    expect(limit({ limit: '100' })).toEqual({ widget: 'number', value: '100' });
    expect(limit({ limit: '200' })).toEqual({ widget: 'number', value: '200' });
    expect(Object.keys(catalog.selections(['limit'], emptyParameterRequest(), MANAGER))).toEqual([
      'limit',
    ]);
  });

  it('keeps no refusal: a request refused once is refused again', () => {
    const catalog = exampleCatalog();
    const request = parseQuerySelections({ category: '9' });
    expect(() => catalog.selections(NAMES, request, MANAGER)).toThrow(/does not exist/);
    expect(() => catalog.selections(NAMES, request, MANAGER)).toThrow(/does not exist/);
  });

  it('keeps no request whose key is too long, and starts again when the table is full', () => {
    const catalog = exampleCatalog();
    const long = parseQuerySelections({ description_filter: 'x'.repeat(KEPT_KEY_MAX_CHARS) });
    const once = catalog.selections(NAMES, long, MANAGER);
    expect(once.description_filter).toEqual({
      widget: 'text',
      text: 'x'.repeat(KEPT_KEY_MAX_CHARS),
    });
    expect(Object.isFrozen(once)).toBe(true);
    expect(catalog.selections(NAMES, long, MANAGER)).not.toBe(once);
    const text = (index: number) => parseQuerySelections({ description_filter: `t${index}` });
    const first = catalog.selections(NAMES, text(0), MANAGER);
    for (let index = 1; index < KEPT_SELECTIONS_MAX; index++) {
      catalog.selections(NAMES, text(index), MANAGER);
    }
    expect(catalog.selections(NAMES, text(0), MANAGER)).toBe(first);
    catalog.selections(NAMES, text(KEPT_SELECTIONS_MAX), MANAGER);
    expect(catalog.selections(NAMES, text(0), MANAGER)).not.toBe(first);
  });

  it('keeps at most so many selected options, counting every kept request', () => {
    const kept = new KeptSelections([], 5);
    const choosing = (count: number): SelectionValues => ({
      many: {
        widget: 'multi_select',
        selected: Array.from({ length: count }, (_, i) => ({
          id: `${i}`,
          label: `${i}`,
          fields: {},
        })),
      },
      one: { widget: 'single_select', selected: null },
    });
    const key = (name: string) => kept.keyOf([name], emptyParameterRequest(), MANAGER);
    // 6 options (5 and the single select's one): more than the table holds, never kept.
    const large = kept.keep(key('a'), choosing(5));
    expect(Object.isFrozen(large.many)).toBe(true);
    expect(kept.get(key('a'))).toBeUndefined();
    const small = kept.keep(key('b'), choosing(1));
    expect(kept.get(key('b'))).toBe(small);
    // 2 and 3 more are 5 in all: kept; one more starts the table again.
    kept.keep(key('c'), choosing(2));
    expect(kept.get(key('b'))).toBe(small);
    kept.keep(key('d'), choosing(0));
    expect(kept.get(key('b'))).toBeUndefined();
    expect(kept.get(key('d'))).toBeDefined();
  });
});
