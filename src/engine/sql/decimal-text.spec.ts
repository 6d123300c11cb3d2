import { decimalPrinters, decimalScale, decimalText } from '@/engine/sql/decimal-text';

describe('decimal text', () => {
  it("reads the scale of DuckDB's and Postgres' decimal types, and of nothing else", () => {
    expect(decimalScale('DECIMAL(10,2)')).toBe(2);
    expect(decimalScale('DECIMAL(38, 4)')).toBe(4);
    expect(decimalScale('numeric(12,3)')).toBe(3);
    expect(decimalScale('numeric')).toBeUndefined();
    expect(decimalScale('DOUBLE')).toBeUndefined();
    expect(decimalScale(undefined)).toBeUndefined();
  });

  it('writes a number at its scale, never rounding, and a string as it is', () => {
    expect(decimalText(2320.8, 2)).toBe('2320.80');
    expect(decimalText(-0.5, 2)).toBe('-0.50');
    expect(decimalText(7, 3)).toBe('7.000');
    expect(decimalText(12.345, 2)).toBe('12.345');
    expect(decimalText('12345678901234567890.10', 2)).toBe('12345678901234567890.10');
    expect(decimalText(5, 0)).toBe('5');
    expect(decimalText(1e21, 2)).toBe('1e+21');
  });

  it('gives a printer to the decimal columns of a known scale only', () => {
    const printers = decimalPrinters([
      { type: 'decimal', databaseType: 'DECIMAL(10,2)' },
      { type: 'decimal', databaseType: 'numeric' },
      { type: 'number', databaseType: 'DOUBLE' },
    ]);
    expect(printers[0]?.(3248.5)).toBe('3248.50');
    expect(printers.slice(1)).toEqual([undefined, undefined]);
  });
});
