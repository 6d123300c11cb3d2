import { randomUUID } from 'node:crypto';
import type { BuildQueue, Submission } from '@/builds/build-queue';
import { errorMessage } from '@/builds/build-runner';
import { NotReadyError } from '@/core/errors';
import type { BuildTrigger } from '@/database/tables/build-runs.entity';
import type { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import type { Engine } from '@/engine/engine';
import type { JsonLogger } from '@/runtime/json-logger';

// A queue store that does not answer within this time is down: say so instead of hanging.
const SUBMIT_TIMEOUT_MS = 5000;

/** A build the queue took: its run in the history, and its end (rejected with the build's error). */
export interface QueuedBuild {
  buildId: string;
  done: Promise<void>;
}

/**
 * Queues a build of this project, whatever asked for it (a request, the operator, the schedule, the first
 * start): recorded as a queued run first, then given to the queue, which declines it while another build
 * is queued or running.
 */
export class BuildSubmitter {
  constructor(
    private readonly runs: BuildRunsRepository,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly logger: JsonLogger,
  ) {}

  /** The project built here, `expenses v1`: the runs recorded and the jobs queued name it. */
  private get identity(): string {
    return this.engine.environments.identity;
  }

  /** The build queued, or undefined when another one is queued or running. */
  async submit(
    requestedBy: string | null,
    trigger: BuildTrigger,
  ): Promise<QueuedBuild | undefined> {
    const buildId = randomUUID();
    await this.runs.insertQueued(buildId, requestedBy, this.identity, trigger);
    let timer: NodeJS.Timeout | undefined;
    // On a timeout the run stays queued: if the store comes back and takes the job after all, it runs.
    const pending = this.queue.submit({ buildId, project: this.identity });
    try {
      const submission = await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new NotReadyError(
                  'The builds queue (Redis) does not answer; try again shortly',
                  10,
                ),
              ),
            SUBMIT_TIMEOUT_MS,
          );
        }),
      ]);
      if (!submission.accepted) {
        await this.runs.delete(buildId);
        return undefined;
      }
      this.logger.emit('info', 'build queued', { buildId, requestedBy });
      return { buildId, done: submission.done };
    } catch (error) {
      if (error instanceof NotReadyError) this.followLate(buildId, requestedBy, pending);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A submission that outlived its request (the queue's store was unreachable) settles once the store is
   * back. Taken, the build runs; declined, because another build held the queue by then (one that was
   * running when the store went away, say), its run is removed rather than left queued for ever.
   */
  private followLate(
    buildId: string,
    requestedBy: string | null,
    pending: Promise<Submission>,
  ): void {
    pending
      .then(async (submission) => {
        if (submission.accepted) {
          this.logger.emit('info', 'build queued', { buildId, requestedBy, late: true });
          submission.done.catch(() => undefined);
          return;
        }
        await this.runs.delete(buildId);
        this.logger.emit('warn', 'build not started: another one was queued or running', {
          buildId,
          requestedBy,
          reason: 'asked for while the queue was unreachable',
        });
      })
      .catch((error: unknown) =>
        this.logger.emit('warn', 'build not queued', { buildId, error: errorMessage(error) }),
      );
  }
}
