import type { BuildJob } from '@/builds/build-job';
import { InProcessBuildQueue } from '@/builds/build-queue';

/** A runner that records what it ran and, unless told to fail, finishes when released. */
function runner(fail?: Error) {
  const ran: string[] = [];
  let release = () => {};
  return {
    ran,
    release: () => release(),
    run: async (job: BuildJob) => {
      ran.push(job.buildId);
      if (fail) throw fail;
      await new Promise<void>((resolve) => (release = resolve));
    },
  };
}

describe('InProcessBuildQueue', () => {
  it('runs one build at a time and refuses a second while the first runs', async () => {
    const builds = runner();
    const queue = new InProcessBuildQueue(builds);
    const first = await queue.submit({ buildId: 'a' });
    expect(first.accepted).toBe(true);
    expect(await queue.busy()).toBe(true);
    expect(await queue.submit({ buildId: 'b' })).toEqual({ accepted: false });
    await new Promise((resolve) => setImmediate(resolve));
    builds.release();
    if (first.accepted) await first.done;
    expect(await queue.busy()).toBe(false);
    expect(builds.ran).toEqual(['a']);
    const third = await queue.submit({ buildId: 'c' });
    expect(third.accepted).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    builds.release();
    if (third.accepted) await third.done;
    expect(builds.ran).toEqual(['a', 'c']);
  });

  it('passes a failed build on to the caller and frees the queue', async () => {
    const queue = new InProcessBuildQueue(runner(new Error('model broken failed')));
    const submitted = await queue.submit({ buildId: 'a' });
    expect(submitted.accepted).toBe(true);
    if (submitted.accepted) await expect(submitted.done).rejects.toThrow('model broken failed');
    expect(await queue.busy()).toBe(false);
  });
});
