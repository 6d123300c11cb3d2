import { Decimal } from '@/core/parameters/decimal';

const d = (text: string): Decimal => {
  const value = Decimal.parse(text);
  if (value === null) throw new Error(`not a decimal: ${text}`);
  return value;
};

describe('Decimal', () => {
  it('adds 0.1 and 0.2 to exactly 0.3', () => {
    expect(d('0.1').add(d('0.2')).toString()).toBe('0.3');
    expect(d('0.1').add(d('0.2')).equals(d('0.3'))).toBe(true);
    expect(d('0.1').add(d('0.2')).toNumber()).toBe(0.3);
  });

  it.each([
    ['12', '12'],
    ['-0.50', '-0.5'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['+7', '7'],
    ['007.2500', '7.25'],
    ['-0', '0'],
    ['1e3', '1000'],
    ['1.5E-7', '0.00000015'],
    ['123e-2', '1.23'],
  ])('parses %s as %s', (text, expected) => {
    expect(d(text).toString()).toBe(expected);
  });

  it.each([
    '',
    '.',
    'abc',
    '1,5',
    ' 1',
    '1 ',
    'Infinity',
    'NaN',
    '0x10',
    '1e',
    '--1',
    '1e999999999',
  ])('refuses %j', (text) => {
    expect(Decimal.parse(text)).toBeNull();
  });

  it('refuses numbers too large to handle safely', () => {
    expect(Decimal.parse('1'.repeat(61))).toBeNull();
    expect(Decimal.parse('1e100')).toBeNull();
    expect(Decimal.parse(`0.${'0'.repeat(60)}1`)).toBeNull();
  });

  it('reads numbers through their shortest text, without binary error', () => {
    expect(Decimal.fromNumber(0.1)?.toString()).toBe('0.1');
    expect(Decimal.fromNumber(1e21)?.toString()).toBe('1000000000000000000000');
    expect(Decimal.fromNumber(1e-7)?.toString()).toBe('0.0000001');
    expect(Decimal.fromNumber(Number.NaN)).toBeNull();
    expect(Decimal.fromNumber(Infinity)).toBeNull();
  });

  it('reads numbers, bigints and numeric strings, nothing else', () => {
    expect(Decimal.from(10n)?.toString()).toBe('10');
    expect(Decimal.from('2.50')?.toString()).toBe('2.5');
    expect(Decimal.from(3)?.toString()).toBe('3');
    expect(Decimal.from(true)).toBeNull();
    expect(Decimal.from(null)).toBeNull();
    expect(Decimal.from({})).toBeNull();
  });

  it('compares across scales', () => {
    expect(d('1.10').compare(d('1.1'))).toBe(0);
    expect(d('1.09').compare(d('1.1'))).toBe(-1);
    expect(d('-1').compare(d('-1.5'))).toBe(1);
    expect(d('-0.001').sign()).toBe(-1);
    expect(d('0.000').sign()).toBe(0);
  });

  it('subtracts and multiplies by an integer exactly', () => {
    expect(d('0.3').subtract(d('0.1')).toString()).toBe('0.2');
    expect(d('0.1').times(3n).toString()).toBe('0.3');
    expect(d('-2.5').times(4n).toString()).toBe('-10');
  });

  it('knows multiples of an increment exactly', () => {
    expect(d('0.3').isMultipleOf(d('0.1'))).toBe(true);
    expect(d('1000').isMultipleOf(d('10'))).toBe(true);
    expect(d('15').isMultipleOf(d('10'))).toBe(false);
    expect(d('0.35').isMultipleOf(d('0.1'))).toBe(false);
    expect(d('-0.6').isMultipleOf(d('0.2'))).toBe(true);
    expect(d('1').isMultipleOf(d('0'))).toBe(false);
  });

  it('says whether a JSON number carries the value exactly', () => {
    expect(d('0.1').isExactAsNumber()).toBe(true);
    expect(d('123456789.123456').isExactAsNumber()).toBe(true);
    expect(d('0.12345678901234567890').isExactAsNumber()).toBe(false);
    expect(d('12345678901234567890').isExactAsNumber()).toBe(false);
  });

  it('serialises to JSON as its exact text', () => {
    expect(JSON.stringify({ value: d('0.10') })).toBe('{"value":"0.1"}');
  });
});
