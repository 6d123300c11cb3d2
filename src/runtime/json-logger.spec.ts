import { JsonLogger, LinesPerTurn } from '@/runtime/json-logger';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('LinesPerTurn', () => {
  it('writes the lines of one turn together, in order, once the turn is over', async () => {
    const out: string[] = [];
    const lines = new LinesPerTurn((text) => out.push(text));
    lines.write('a\n', false);
    lines.write('b\n', false);
    expect(out).toEqual([]);
    await nextTurn();
    expect(out).toEqual(['a\nb\n']);
    lines.write('c\n', false);
    await nextTurn();
    expect(out).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes a line that may not wait at once, after what it held', () => {
    const out: string[] = [];
    const lines = new LinesPerTurn((text) => out.push(text));
    lines.write('info\n', false);
    lines.write('error\n', true);
    expect(out).toEqual(['info\nerror\n']);
  });

  it('never holds more than its bound: a line that reaches it writes what is held at once', async () => {
    const out: string[] = [];
    const lines = new LinesPerTurn((text) => out.push(text), 100);
    const line = `${'x'.repeat(29)}\n`;
    for (let i = 0; i < 10; i++) lines.write(line, false);
    // 30 characters a line: the fourth reaches 120 ≥ 100, and so does the eighth; two are left for the turn.
    expect(out).toEqual([line.repeat(4), line.repeat(4)]);
    await nextTurn();
    expect(out).toEqual([line.repeat(4), line.repeat(4), line.repeat(2)]);
    expect(out.join('')).toBe(line.repeat(10));
  });

  it('is what JsonLogger writes through: emitSoon waits for the turn, emit does not', async () => {
    const out: string[] = [];
    const lines = new LinesPerTurn((text) => out.push(text));
    const logger = new JsonLogger('info', lines.write);
    logger.emitSoon('info', 'request', { status: 200 });
    expect(out).toHaveLength(0);
    logger.emit('info', 'dataset query');
    expect(out).toHaveLength(1);
    const written = out[0]
      .trimEnd()
      .split('\n')
      .map((text) => JSON.parse(text) as object);
    expect(written).toEqual([
      expect.objectContaining({ level: 'info', msg: 'request', status: 200 }),
      expect.objectContaining({ level: 'info', msg: 'dataset query' }),
    ]);
    await nextTurn();
    expect(out).toHaveLength(1);
  });
});
