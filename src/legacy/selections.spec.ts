import { LEGACY_SELECTIONS, hyphensForUnderscores } from '@/legacy/selections';
import { ANONYMOUS, exampleCatalog } from '@/core/parameters/__fixtures__/example-parameters';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';

let catalog: ParameterCatalog;
beforeAll(() => {
  catalog = exampleCatalog();
});

describe('hyphensForUnderscores', () => {
  it('turns every hyphen into an underscore and leaves other names alone', () => {
    expect(hyphensForUnderscores('sales-by-month')).toBe('sales_by_month');
    expect(hyphensForUnderscores('group_by')).toBe('group_by');
  });
});

describe('LEGACY_SELECTIONS', () => {
  it('takes hyphens for underscores in names and in x_parent_param', () => {
    const request = parseQuerySelections(
      { 'group-by': 'day', 'x-parent-param': 'group-by', 'x-verify-params': 'true' },
      LEGACY_SELECTIONS,
    );
    expect([...request.selections.keys()]).toEqual(['group_by']);
    expect(request.parentParam).toBe('group_by');
    expect(request.verifyParams).toBe(true);
  });

  it('takes the 0.4 forms: hyphens, comma-joined and JSON-list strings, numbers', () => {
    const names = ['between_filter', 'category'];
    const legacyGet = parseQuerySelections(
      { 'between-filter': '10,20', category: '["0","1"]' },
      LEGACY_SELECTIONS,
    );
    const legacyPost = parseBodySelections(
      { 'between-filter': [10, 20], category: '0,1' },
      LEGACY_SELECTIONS,
    );
    const strict = parseBodySelections({ between_filter: ['10', '20'], category: ['0', '1'] });
    const expected = catalog.selections(names, strict, ANONYMOUS);
    expect(catalog.selections(names, legacyGet, ANONYMOUS)).toEqual(expected);
    expect(catalog.selections(names, legacyPost, ANONYMOUS)).toEqual(expected);
    // The same forms are refused when strict.
    expect(() =>
      catalog.selections(names, parseQuerySelections({ category: '0,1' }), ANONYMOUS),
    ).toThrow('Parameter "category": option "0,1" does not exist');
  });
});
