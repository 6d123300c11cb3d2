import { InProcessBuildQueue } from '@/builds/build-queue';

describe('InProcessBuildQueue', () => {
  it('runs one build at a time and refuses a second while the first runs', async () => {
    const queue = new InProcessBuildQueue();
    let release!: () => void;
    const ran: string[] = [];
    queue.setHandler(async (job) => {
      ran.push(job.buildId);
      await new Promise<void>((resolve) => (release = resolve));
    });
    const first = await queue.submit({ buildId: 'a' });
    expect(first.accepted).toBe(true);
    expect(await queue.busy()).toBe(true);
    expect(await queue.submit({ buildId: 'b' })).toEqual({ accepted: false });
    await new Promise((resolve) => setImmediate(resolve));
    release();
    if (first.accepted) await first.done;
    expect(await queue.busy()).toBe(false);
    expect(ran).toEqual(['a']);
    const third = await queue.submit({ buildId: 'c' });
    expect(third.accepted).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    if (third.accepted) await third.done;
    expect(ran).toEqual(['a', 'c']);
  });

  it('passes a failed build on to the caller and frees the queue', async () => {
    const queue = new InProcessBuildQueue();
    queue.setHandler(() => Promise.reject(new Error('model broken failed')));
    const submitted = await queue.submit({ buildId: 'a' });
    expect(submitted.accepted).toBe(true);
    if (submitted.accepted) await expect(submitted.done).rejects.toThrow('model broken failed');
    expect(await queue.busy()).toBe(false);
  });
});
