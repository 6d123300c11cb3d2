import { parseEngineError, sourcePosition } from '@/engine/check/engine-error-position';

describe('engine error positions', () => {
  const statement = 'WITH x AS (\nSELECT 1\n)\nSELECT\n  e.id,\n  e.amountt\nFROM e';
  const error =
    'Binder Error: Table "e" does not have a column named "amountt"\n\nCandidate bindings: : "amount"\n\n' +
    'LINE 6:   e.amountt\n          ^';

  it('splits the message from the line and column of the statement', () => {
    expect(parseEngineError(error, statement)).toEqual({
      message:
        'Binder Error: Table "e" does not have a column named "amountt"\n\nCandidate bindings: : "amount"',
      line: 6,
      column: 3,
    });
    expect(
      parseEngineError(
        'Parser Error: syntax error at or near "SELEC"\n\nLINE 1: SELEC 1\n        ^',
        'SELEC 1',
      ),
    ).toEqual({
      message: 'Parser Error: syntax error at or near "SELEC"',
      line: 1,
      column: 1,
    });
    expect(parseEngineError('Something else', 'SELECT 1')).toEqual({ message: 'Something else' });
  });

  it('counts the caret from the window DuckDB shows of a long line', () => {
    const long = `SELECT ${'a, '.repeat(60)}nope FROM t`;
    const at = long.indexOf('nope');
    const shown = `...${long.slice(at - 20, at + 10)}...`;
    const text = `Binder Error: x\n\nLINE 1: ${shown}\n${' '.repeat('LINE 1: '.length + 3 + 20)}^`;
    expect(parseEngineError(text, long).column).toBe(at + 1);
  });

  it('finds the line in the template: the same line number, or the one line with that text', () => {
    const source = '-- totals\nSELECT\n  e.id,\n  e.amountt\nFROM e';
    // The statement's line 6 ("  e.amountt") is the source's line 4, found by its text.
    expect(sourcePosition(statement, 6, 3, source)).toEqual({ line: 4, column: 3 });
    expect(sourcePosition('SELEC 1', 1, 1, 'SELEC 1')).toEqual({ line: 1, column: 1 });
    // Written by the template (not in the source), or on several lines: unknown.
    expect(sourcePosition('SELECT 1\nFROM t', 2, 1, 'SELECT 1\n{{ from }}')).toBeUndefined();
    expect(sourcePosition('x\ny', 1, 1, 'x\nx')).toEqual({ line: 1, column: 1 });
    expect(sourcePosition('y\nx', 2, 1, 'x\nz\nx')).toBeUndefined();
    // A line the template filled in: found by the word at the caret, when one line of the file has it.
    expect(sourcePosition('x\nSELEC a, b', 2, 1, 'x\n  SELEC {{ columns }}')).toEqual({
      line: 2,
      column: 3,
    });
    expect(sourcePosition('SELEC a', 1, 1, 'SELEC {{ a }}\nSELEC {{ b }}')).toBeUndefined();
  });
});
