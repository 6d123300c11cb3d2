/** What a queued build carries: the id of its row in the build history. */
export interface BuildJob {
  buildId: string;
}

export type BuildHandler = (job: BuildJob) => Promise<void>;

export type Submission = { accepted: false } | { accepted: true; done: Promise<void> };

export const BUILDS_QUEUE = 'builds';

/**
 * The builds queue: at most one build queued or running at a time, across every server process that shares
 * the queue. BullMQ on Redis when configured, otherwise in this process.
 */
export abstract class BuildQueue {
  abstract readonly kind: 'bullmq' | 'in-process';
  private handler?: BuildHandler;

  /** The build service registers the function that runs a build. */
  setHandler(handler: BuildHandler): void {
    this.handler = handler;
  }

  /** Runs a job on this process; called by the worker. */
  protected handle(job: BuildJob): Promise<void> {
    if (!this.handler) throw new Error('No build handler registered');
    return this.handler(job);
  }

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

/** The queue of a single process, for a machine without Redis. Same rule: one build at a time. */
export class InProcessBuildQueue extends BuildQueue {
  readonly kind = 'in-process' as const;
  private running?: Promise<void>;

  submit(job: BuildJob): Promise<Submission> {
    if (this.running) return Promise.resolve({ accepted: false });
    const done = Promise.resolve()
      .then(() => this.handle(job))
      .finally(() => {
        this.running = undefined;
      });
    this.running = done;
    // The caller may not wait; a failure is recorded by the handler, so it must not go unhandled here.
    done.catch(() => undefined);
    return Promise.resolve({ accepted: true, done });
  }

  busy(): Promise<boolean> {
    return Promise.resolve(this.running !== undefined);
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  /** Waits for the running build, if any, on shutdown. */
  async drain(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
