import { AsyncLocalStorage } from 'node:async_hooks';
import { GroupCommit } from '@/audit/group-commit';

/** A store whose writes finish when the test says so. */
function store() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  return {
    batches,
    pending,
    write: (items: number[]) =>
      new Promise<void>((resolve) => {
        batches.push([...items]);
        pending.push(resolve);
      }),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes the items of one turn in one batch, and those added during a write in the next', async () => {
    const s = store();
    const queue = new GroupCommit<number>({
      write: s.write,
      failed: jest.fn(),
      maxBatch: 100,
      maxQueued: 1000,
    });
    await Promise.all([queue.add(1), queue.add(2), queue.add(3)]);
    expect(s.batches).toEqual([]);
    await turn();
    expect(s.batches).toEqual([[1, 2, 3]]);
    await queue.add(4);
    await queue.add(5);
    expect(s.batches).toHaveLength(1);
    const flushed = queue.flush();
    s.pending[0]();
    await turn();
    expect(s.batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    s.pending[1]();
    await flushed;
    expect(queue.waiting).toBe(0);
  });

  it('cuts batches at maxBatch, in order', async () => {
    const written: number[][] = [];
    const queue = new GroupCommit<number>({
      write: (items) => Promise.resolve(void written.push(items)),
      failed: jest.fn(),
      maxBatch: 2,
      maxQueued: 1000,
    });
    for (const item of [1, 2, 3, 4, 5]) void queue.add(item);
    await queue.flush();
    expect(written).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('reports a failed batch and goes on with the next', async () => {
    const failed = jest.fn();
    const written: number[][] = [];
    let first = true;
    const queue = new GroupCommit<number>({
      write: (items) => {
        if (first) {
          first = false;
          return Promise.reject(new Error('database down'));
        }
        written.push(items);
        return Promise.resolve();
      },
      failed,
      maxBatch: 1,
      maxQueued: 1000,
    });
    void queue.add(1);
    void queue.add(2);
    await queue.flush();
    expect(failed).toHaveBeenCalledWith([1], new Error('database down'));
    expect(written).toEqual([[2]]);
    void queue.add(3);
    await queue.flush();
    expect(written).toEqual([[2], [3]]);
  });

  it('makes a caller wait once more than maxQueued items wait', async () => {
    const s = store();
    const queue = new GroupCommit<number>({
      write: s.write,
      failed: jest.fn(),
      maxBatch: 10,
      maxQueued: 2,
    });
    await queue.add(1);
    await queue.add(2);
    let third = false;
    void queue.add(3).then(() => (third = true));
    await turn();
    expect(third).toBe(false);
    s.pending[0]();
    await queue.flush();
    expect(third).toBe(true);
    expect(s.batches).toEqual([[1, 2, 3]]);
  });

  it("writes outside the first caller's async context", async () => {
    const context = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const queue = new GroupCommit<number>({
      write: () => Promise.resolve(void seen.push(context.getStore())),
      failed: jest.fn(),
      maxBatch: 10,
      maxQueued: 10,
    });
    await context.run('request 1', () => queue.add(1));
    await queue.flush();
    expect(seen).toEqual([undefined]);
  });
});
