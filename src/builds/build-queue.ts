import type { BuildJob, BuildJobRunner } from '@/builds/build-job';
import { type BuildSchedule, nextRun } from '@/core/project/build-schedule';

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

  /**
   * Runs builds of `project` on `schedule` from now on, once per time it names across every process that
   * shares the queue; none (undefined) stops them. `due` is called when a scheduled build is due here and
   * this process must queue it itself (the in-process queue); on BullMQ the worker that takes the
   * scheduler's job runs it.
   */
  abstract schedule(
    schedule: BuildSchedule | undefined,
    project: string,
    due: () => void,
  ): Promise<void>;
}

// setTimeout's longest wait; a later run is waited for in steps.
const LONGEST_WAIT_MS = 2 ** 31 - 1;

/**
 * The queue of a single process, for a machine without Redis. Same rule: one build at a time. It runs the
 * job itself, with the build runner.
 */
export class InProcessBuildQueue extends BuildQueue {
  readonly kind = 'in-process' as const;
  private running?: Promise<void>;
  private timer?: NodeJS.Timeout;

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

  /**
   * A timer for the next time the schedule names, set again after each: times passed while the process
   * was down are not run.
   */
  schedule(schedule: BuildSchedule | undefined, _project: string, due: () => void): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!schedule) return Promise.resolve();
    const arm = (): void => {
      const at = nextRun(schedule, new Date()).getTime();
      const wait = (): void => {
        const left = at - Date.now();
        this.timer = setTimeout(
          () => {
            if (left > LONGEST_WAIT_MS) return wait();
            due();
            arm();
          },
          Math.max(0, Math.min(left, LONGEST_WAIT_MS)),
        );
        // A schedule does not keep a stopping process alive.
        this.timer.unref();
      };
      wait();
    };
    arm();
    return Promise.resolve();
  }
}
