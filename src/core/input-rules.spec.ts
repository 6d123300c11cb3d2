import {
  ARGUMENT_BOUNDS,
  inputFault,
  isStorableText,
  memberPath,
  STORABLE_ONLY,
  storableCopy,
} from '@/core/input-rules';

const small = { depth: 3, members: 5, textChars: 10 };

describe('inputFault', () => {
  it('passes a value that keeps every rule', () => {
    expect(inputFault({ sql: 'select 1', columns: ['a', 'b'], limit: 3 }, 'arguments')).toBeNull();
    expect(inputFault('plain', 'text', small)).toBeNull();
    expect(inputFault(null, 'arguments')).toBeNull();
  });

  it('names the string that holds a NUL or a lone surrogate', () => {
    expect(inputFault({ sql: 'select 1;\0drop' }, 'arguments')).toEqual({
      path: 'arguments.sql',
      rule: 'unstorable',
      message:
        'arguments.sql holds a NUL character or an unpaired UTF-16 surrogate, which no input may contain',
    });
    expect(inputFault({ selections: { region: ['ok', 'x\ud800'] } }, 'arguments')?.path).toBe(
      'arguments.selections.region[1]',
    );
    expect(inputFault({ a: '\udc00' }, 'arguments')?.rule).toBe('unstorable');
    // A pair is a character, not a fault.
    expect(inputFault({ a: 'emoji \ud83d\ude00' }, 'arguments')).toBeNull();
  });

  it('names the object whose key holds what storage cannot', () => {
    const found = inputFault({ selections: { 'a\0b': 1 } }, 'arguments');
    expect(found?.path).toBe('arguments.selections');
    expect(found?.message).toMatch(/^arguments\.selections has a key that holds a NUL/);
  });

  it('bounds strings and keys by length', () => {
    expect(inputFault({ sql: 'x'.repeat(11) }, 'arguments', small)).toMatchObject({
      path: 'arguments.sql',
      rule: 'too_long',
      message: 'arguments.sql is longer than 10 characters',
    });
    expect(inputFault({ ['k'.repeat(11)]: 1 }, 'arguments', small)?.message).toBe(
      'arguments has a key longer than 10 characters',
    );
    expect(inputFault({ sql: 'x'.repeat(100_000) }, 'arguments')).toBeNull();
    expect(inputFault({ sql: 'x'.repeat(100_001) }, 'arguments')?.rule).toBe('too_long');
  });

  it('bounds nesting, without recursing', () => {
    // Three levels of brackets, as the HTTP door's byte scan counts them.
    expect(inputFault({ a: { b: { c: 1 } } }, 'arguments', small)).toBeNull();
    expect(inputFault({ a: { b: { c: [1] } } }, 'arguments', small)).toMatchObject({
      path: 'arguments.a.b.c',
      rule: 'too_deep',
    });
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(inputFault(deep, 'arguments')?.rule).toBe('too_deep');
  });

  it('bounds members over the whole value, arrays and objects alike', () => {
    expect(inputFault({ a: [1, 2], b: 1, c: 1 }, 'arguments', small)).toBeNull();
    expect(inputFault({ a: [1, 2, 3], b: 1, c: 1 }, 'arguments', small)).toMatchObject({
      path: 'arguments.a',
      rule: 'too_many_members',
    });
    const wide = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i]));
    expect(inputFault(wide, 'arguments')?.message).toBe(
      'arguments takes the input past 1000 members (object keys and list items in all)',
    );
    expect(ARGUMENT_BOUNDS.members).toBe(1000);
  });

  it('checks storable text only with STORABLE_ONLY', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 5000 }, (_, i) => [`k${i}`, 'v'.repeat(200_000)]),
    );
    expect(inputFault(wide, 'body', STORABLE_ONLY)).toBeNull();
    expect(inputFault({ ...wide, z: '\0' }, 'body', STORABLE_ONLY)?.path).toBe('body.z');
  });
});

describe('memberPath', () => {
  it('quotes a key that is no identifier, short and printable', () => {
    expect(memberPath('arguments', 'sql')).toBe('arguments.sql');
    expect(memberPath('arguments', 3)).toBe('arguments[3]');
    expect(memberPath('arguments', 'a b')).toBe('arguments["a b"]');
    expect(memberPath('arguments', 'a\0')).toBe('arguments["a\uFFFD"]');
    expect(memberPath('arguments', 'k'.repeat(100))).toBe(`arguments["${'k'.repeat(64)}…"]`);
  });
});

describe('isStorableText and storableCopy', () => {
  it('agree: a copy is always storable', () => {
    for (const text of ['a\0b', '\ud800', 'x\udc00', '\ude00\ud83d', 'fine']) {
      expect(isStorableText(storableCopy(text))).toBe(true);
    }
    expect(storableCopy({ 'k\0': ['\ud800'] })).toEqual({ 'k\uFFFD': ['\uFFFD'] });
  });
});
