import type { BuildQueue } from '@/builds/build-queue';
import { errorMessage } from '@/builds/build-runner';
import type { BuildSubmitter } from '@/builds/build-submitter';
import type { AppConfig } from '@/config/config';
import type { BuildSchedule } from '@/core/project/build-schedule';
import type { Engine } from '@/engine/engine';
import { BuildInterruptedError } from '@/engine/materialize/materialize-environment';
import type { JsonLogger } from '@/runtime/json-logger';

/**
 * Builds the operator starts rather than a client of the API: a rebuild (SIGHUP, `drey dev`, or this
 * process at start when the build served is not the project's) and the schedule's. Nobody waits for them:
 * their outcome is logged, and the history has it.
 */
export class OperatorBuilds {
  constructor(
    private readonly submitter: BuildSubmitter,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly logger: JsonLogger,
    private readonly config: AppConfig,
  ) {}

  /** The project built here, `expenses v1`: the schedule builds it. */
  private get identity(): string {
    return this.engine.environments.identity;
  }

  /**
   * The schedule builds run on: BUILD_SCHEDULE when set (`off`: none), else the project's `build.schedule`.
   * Read at start: a schedule changed in the project applies from the next start.
   */
  get schedule(): BuildSchedule | undefined {
    const configured = this.config.buildSchedule;
    if (configured === 'off') return undefined;
    return configured ?? this.engine.project.schedule;
  }

  /** Sets the schedule on the queue (once across replicas on BullMQ) and says so in the log. */
  async startSchedule(): Promise<void> {
    const schedule = this.schedule;
    await this.queue.schedule(schedule, this.identity, () => void this.scheduled());
    if (schedule) {
      this.logger.emit('info', 'builds scheduled', {
        schedule: schedule.pattern,
        timezone: schedule.timezone,
        from: this.config.buildSchedule ? 'BUILD_SCHEDULE' : 'project.yml build.schedule',
      });
    }
  }

  /** A build the schedule names, on the in-process queue: skipped when another one is queued or running. */
  private async scheduled(): Promise<void> {
    try {
      const submission = await this.submitter.submit(null, 'schedule');
      if (!submission) {
        this.logger.emit('info', 'scheduled build skipped: another build is queued or running');
        return;
      }
      this.logger.emit('info', 'scheduled build', { buildId: submission.buildId });
      await submission.done;
    } catch (error) {
      // The runner has recorded and logged how it ended; nobody waits on a scheduled build.
      if (!(error instanceof BuildInterruptedError)) {
        this.logger.emit('warn', 'scheduled build did not succeed', { error: errorMessage(error) });
      }
    }
  }

  /**
   * A build asked for by the operator (SIGHUP, `drey dev`), not through the API: queued like any other,
   * its outcome logged. False when another build is queued or running.
   */
  async rebuild(reason: string): Promise<boolean> {
    const submission = await this.submitter.submit(null, 'operator');
    if (!submission) {
      this.logger.emit('warn', 'build not started: another one is queued or running', { reason });
      return false;
    }
    this.logger.emit('info', 'build requested', { buildId: submission.buildId, reason });
    // The runner logs the outcome; the history has it too.
    submission.done.catch(() => undefined);
    return true;
  }
}
