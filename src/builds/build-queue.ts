import type { BuildJob, BuildJobRunner } from '@/builds/build-job';

export type Submission = { accepted: false } | { accepted: true; done: Promise<void> };

export const BUILDS_QUEUE = 'builds';

/**
 * The builds queue: at most one build queued or running at a time, across every server process that shares
 * the queue. BullMQ on Redis when configured (its worker is `BuildsProcessor`), otherwise in this process.
 */
export abstract class BuildQueue {
  abstract readonly kind: 'bullmq' | 'in-process';

  /**
   * Queues a build unless one is already queued or running. When accepted, `done` settles when the build
   * finishes, with the build's error if it failed.
   */
  abstract submit(job: BuildJob): Promise<Submission>;

  /** Whether a build is queued or running anywhere. */
  abstract busy(): Promise<boolean>;

  /** Throws when the queue's backing store is unreachable. */
  abstract ping(): Promise<void>;
}

/**
 * The queue of a single process, for a machine without Redis. Same rule: one build at a time. It runs the
 * job itself, with the build runner.
 */
export class InProcessBuildQueue extends BuildQueue {
  readonly kind = 'in-process' as const;
  private running?: Promise<void>;

  constructor(private readonly runner: BuildJobRunner) {
    super();
  }

  submit(job: BuildJob): Promise<Submission> {
    if (this.running) return Promise.resolve({ accepted: false });
    const done = Promise.resolve()
      .then(() => this.runner.run(job))
      .finally(() => {
        this.running = undefined;
      });
    this.running = done;
    // The caller may not wait; a failure is recorded by the runner, so it must not go unhandled here.
    done.catch(() => undefined);
    return Promise.resolve({ accepted: true, done });
  }

  busy(): Promise<boolean> {
    return Promise.resolve(this.running !== undefined);
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }
}
