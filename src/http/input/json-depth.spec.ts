import { jsonNestsDeeperThan } from '@/http/input/json-depth';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('jsonNestsDeeperThan', () => {
  it('counts objects and arrays together', () => {
    expect(jsonNestsDeeperThan(bytes('{"a":[1,{"b":[2]}]}'), 4)).toBe(false);
    expect(jsonNestsDeeperThan(bytes('{"a":[1,{"b":[2]}]}'), 3)).toBe(true);
  });

  it('measures depth, not the number of brackets', () => {
    const wide = `[${Array.from({ length: 1000 }, () => '[1]').join(',')}]`;
    expect(jsonNestsDeeperThan(bytes(wide), 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonNestsDeeperThan(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonNestsDeeperThan(bytes('{"a":"\\"[[[["}'), 1)).toBe(false);
    expect(jsonNestsDeeperThan(bytes('["\\\\",[[1]]]'), 2)).toBe(true);
  });

  it('answers for depths that would overflow a recursive walk, without recursing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(jsonNestsDeeperThan(bytes(deep), 32)).toBe(true);
  });
});
