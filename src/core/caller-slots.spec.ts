import { CallerSlots, slotOwner } from '@/core/caller-slots';

describe('CallerSlots', () => {
  const slots = () => new CallerSlots({ query: 2, export: 1, render: 1 });

  it('refuses a caller past the limit with 429 and Retry-After, others unaffected', () => {
    const s = slots();
    const a = slotOwner('alice', '10.0.0.1');
    s.take('query', a);
    const second = s.take('query', a);
    expect(() => s.take('query', a)).toThrow(
      expect.objectContaining({ code: 'rate_limited', retryAfterSeconds: 1 }),
    );
    expect(() => s.take('query', slotOwner(null, '10.0.0.1'))).not.toThrow();
    expect(() => s.take('export', a)).not.toThrow();
    second();
    second(); // once only
    expect(() => s.take('query', a)).not.toThrow();
    expect(() => s.take('query', a)).toThrow();
  });

  it('gives a slot back when the work fails', async () => {
    const s = slots();
    await expect(s.run('render', 'x', () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(s.heldCount()).toBe(0);
  });

  it("holds a stream's slot from its first read until it ends or is dropped", async () => {
    const s = slots();
    const rows = (): AsyncIterable<number> => ({
      [Symbol.asyncIterator]: () => [1, 2, 3].values() as unknown as AsyncIterator<number>,
    });
    const stream = s.stream('export', 'x', rows());
    expect(s.heldCount()).toBe(0);
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    expect(s.heldCount()).toBe(1);
    await expect(
      (async () => {
        for await (const _ of s.stream('export', 'x', rows())) void _;
      })(),
    ).rejects.toMatchObject({ code: 'rate_limited' });
    await iterator.return?.(undefined);
    expect(s.heldCount()).toBe(0);
  });
});
