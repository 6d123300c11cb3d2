import { listSome } from '@/core/listing';

describe('listSome', () => {
  it('quotes every name when there are few', () => {
    expect(listSome(['day', 'month'])).toBe('"day", "month"');
    expect(listSome([])).toBe('');
  });

  it('names at most the bound and counts the rest', () => {
    const names = Array.from({ length: 25 }, (_, i) => `n${i}`);
    const listed = listSome(names);
    expect(listed.split(', ')).toHaveLength(20);
    expect(listed).toMatch(/"n19" and 5 more$/);
    expect(listSome(names, 3)).toBe('"n0", "n1", "n2" and 22 more');
  });

  it('quotes a name that holds a comma or a quote, so the list stays readable', () => {
    expect(listSome(['0,1', 'a"b'])).toBe('"0,1", "a\\"b"');
  });
});
