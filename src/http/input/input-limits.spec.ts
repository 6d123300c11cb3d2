import {
  MAX_QUERY_PARAMS,
  assertStorable,
  checkUrl,
  isPostgresDataException,
  isStorableText,
  parseQuery,
  storableCopy,
} from '@/http/input/input-limits';

describe('isStorableText', () => {
  it('refuses NUL and unpaired surrogates, keeps pairs and ordinary text', () => {
    expect(isStorableText('plain, accentué, 日本')).toBe(true);
    expect(isStorableText('emoji \ud83d\ude00 pair')).toBe(true);
    expect(isStorableText('a\0b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00')).toBe(false);
    expect(isStorableText('\ude00\ud83d')).toBe(false);
  });
});

describe('assertStorable', () => {
  it('walks arrays, values and keys', () => {
    expect(() => assertStorable({ a: ['ok', { b: 'fine' }] }, 'body')).not.toThrow();
    expect(() => assertStorable({ a: ['ok', { b: 'x\0' }] }, 'body')).toThrow(/NUL/);
    expect(() => assertStorable({ ['k\ud800']: 1 }, 'body')).toThrow(/surrogate/);
  });
});

describe('storableCopy', () => {
  it('replaces what storage refuses and keeps the rest', () => {
    expect(storableCopy({ sql: 'SELECT 1 --\0', n: 3, list: ['\ud800ok'] })).toEqual({
      sql: 'SELECT 1 --\ufffd',
      n: 3,
      list: ['\ufffdok'],
    });
  });
});

describe('parseQuery', () => {
  it("reads repeated names as arrays, as Express' simple parser", () => {
    expect(parseQuery('a=1&a=2&b=x%20y')).toEqual({ a: ['1', '2'], b: 'x y' });
    expect(parseQuery(null)).toEqual({});
  });

  it('refuses more parameters than the limit instead of cutting them', () => {
    const at = Array.from({ length: MAX_QUERY_PARAMS }, (_, i) => `k${i}=1`).join('&');
    expect(Object.keys(parseQuery(at))).toHaveLength(MAX_QUERY_PARAMS);
    expect(() => parseQuery(`${at}&last=1`)).toThrow(/more than 1000 parameters/);
    expect(() => parseQuery(`${'&'.repeat(1200)}group_by=cat`)).toThrow(/more than/);
  });

  it('refuses a NUL in a name or a value', () => {
    expect(() => parseQuery('a=%00')).toThrow(/NUL/);
    expect(() => parseQuery('%00=1')).toThrow(/NUL/);
  });
});

describe('checkUrl', () => {
  it('refuses %00 in the path and reads the query', () => {
    expect(() => checkUrl('/users/a%00b')).toThrow(/NUL/);
    expect(checkUrl('/x?a=1')).toEqual({ a: '1' });
  });
});

describe('isPostgresDataException', () => {
  it('knows class 22 from Postgres and nothing else', () => {
    const nul = Object.assign(new Error('invalid byte sequence'), {
      code: '22021',
      severity: 'ERROR',
    });
    expect(isPostgresDataException(nul)).toBe(true);
    const other = Object.assign(new Error('deadlock'), { code: '40P01', severity: 'ERROR' });
    expect(isPostgresDataException(other)).toBe(false);
    // A code alone (not from Postgres) is not enough.
    expect(isPostgresDataException(Object.assign(new Error('x'), { code: '22021' }))).toBe(false);
    expect(isPostgresDataException(undefined)).toBe(false);
  });
});
