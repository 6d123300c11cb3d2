import { callerParts, canonicalSelections, resultKeyText } from '@/datasets/results/result-keys';
import { EMPLOYEE, exampleCatalog } from '@/core/parameters/__fixtures__/example-parameters';
import { parseQuerySelections } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';

const MANAGER: CallerView = {
  username: 'ann',
  isAdmin: false,
  fields: { role: 'manager', team: 'a' },
};

describe('callerParts', () => {
  it('keeps only what the model reads, so that callers differing elsewhere share a result', () => {
    const other: CallerView = { username: 'bob', isAdmin: true, fields: { role: 'manager' } };
    expect(callerParts(MANAGER, [])).toBeNull();
    expect(callerParts(MANAGER, ['role'])).toEqual(callerParts(other, ['role']));
    expect(callerParts(MANAGER, ['role', 'username'])).not.toEqual(
      callerParts(other, ['role', 'username']),
    );
    expect(callerParts(MANAGER, ['is_admin', 'missing'])).toEqual({
      is_admin: false,
      missing: null,
    });
  });

  it('keeps everything of the caller when the model reads it all', () => {
    const employee: CallerView = { ...MANAGER, fields: { ...MANAGER.fields, role: 'employee' } };
    expect(callerParts(MANAGER, 'all')).not.toEqual(callerParts(employee, 'all'));
  });
});

describe('resultKeyText', () => {
  const selections: SelectionValues = {
    b: { widget: 'date', date: '2024-01-01' },
    a: { widget: 'text', text: 'x' },
  };

  it('is the same whatever the order of the parameters, and differs by build and caller', () => {
    const reordered: SelectionValues = { a: selections.a, b: selections.b };
    const key = resultKeyText('b1', 'd', selections, null);
    expect(resultKeyText('b1', 'd', reordered, null)).toBe(key);
    expect(resultKeyText('b2', 'd', selections, null)).not.toBe(key);
    expect(resultKeyText('b1', 'd', selections, { role: 'manager' })).not.toBe(key);
  });
});

describe('kept selections', () => {
  const catalog = exampleCatalog();
  const request = () => parseQuerySelections({ category: ['1', '0'] });

  it('are made canonical once, and keyed as any other selections', () => {
    const kept = catalog.selections(['category', 'limit'], request(), EMPLOYEE);
    const canonical = canonicalSelections(catalog, kept);
    expect(canonicalSelections(catalog, kept)).toBe(canonical);
    expect(Object.isFrozen(canonical.category)).toBe(true);
    // A copy that is not frozen (not kept) is worked out again, to the same form and key.
    const copy: SelectionValues = structuredClone(kept);
    const again = canonicalSelections(catalog, copy);
    expect(again).not.toBe(canonical);
    expect(again).toEqual(canonical);
    expect(canonical.category).toMatchObject({
      selected: [expect.objectContaining({ id: '0' }), expect.objectContaining({ id: '1' })],
    });
    for (const caller of [null, { role: 'manager' }]) {
      expect(resultKeyText('b1', 'd', canonical, caller)).toBe(
        resultKeyText('b1', 'd', again, caller),
      );
      expect(resultKeyText('b1', 'd', canonical, caller)).toBe(
        `b1\u0000d\u0000${JSON.stringify([
          Object.keys(again)
            .sort()
            .map((name) => [name, again[name]]),
          caller,
        ])}`,
      );
    }
  });
});
