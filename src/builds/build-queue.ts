import type { BuildRunner } from '@/builds/build-runner';

/** What a queued build carries: the id of its row in the build history, and the project to build. */
export interface BuildJob {
  buildId: string;
  /**
   * The identity (`expenses v1`) of the project of the process that queued it: a worker of another project
   * sharing the queue (the same REDIS_URL and REDIS_PREFIX) refuses it rather than build its own in its
   * place. Absent in jobs queued by an earlier version.
   */
  project?: string;
}

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

  constructor(private readonly runner: Pick<BuildRunner, 'run'>) {
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
