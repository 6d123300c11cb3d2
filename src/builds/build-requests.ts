import type { AuditService } from '@/audit/audit.service';
import { errorMessage, wasInterrupted } from '@/builds/build-runner';
import type { BuildSubmitter, QueuedBuild } from '@/builds/build-submitter';
import type { AdminCaller } from '@/core/caller';
import { DomainError, type ErrorCode } from '@/core/errors';
import type { BuildRun } from '@/database/tables/build-runs.entity';
import type { BuildRunsRepository } from '@/database/tables/build-runs.repository';

/** What `POST P/build` stops waiting with when the process stops. */
const STOPPING = new Error('the server process is stopping');

/**
 * Builds asked for through the API, `POST P/build`: waited for to their end, or answered at once with
 * `Prefer: respond-async`; audited either way.
 */
export class BuildRequests {
  /** Rejected when the process stops: `POST P/build` stops waiting then. */
  private readonly stopped: Promise<never>;
  private stopWaiting: () => void = () => undefined;

  constructor(
    private readonly submitter: BuildSubmitter,
    private readonly runs: BuildRunsRepository,
    private readonly audit: AuditService,
  ) {
    this.stopped = new Promise<never>((_, reject) => {
      this.stopWaiting = () => reject(STOPPING);
    });
    this.stopped.catch(() => undefined);
  }

  /** The process is stopping: every `POST P/build` still waiting is answered (503). */
  stop(): void {
    this.stopWaiting();
  }

  /**
   * `POST P/build`: queues a build and waits for it. 400 while another is queued or running; 400
   * `invalid_project` when the project made it fail, 500 `build_failed` when something it needed did; 503
   * `build_interrupted` when the process stops meanwhile.
   */
  async build(caller: AdminCaller): Promise<void> {
    const submission = await this.requested(caller);
    try {
      await Promise.race([submission.done, this.stopped]);
    } catch (error) {
      const run = await this.runs.findById(submission.buildId);
      if (run?.status === 'succeeded') return;
      if (run?.status === 'failed') {
        throw new DomainError(failureCode(run), run.error ?? 'The build failed');
      }
      if (error === STOPPING) {
        // This process stops while another one builds (the queue is shared): the build goes on there.
        throw new DomainError(
          'build_interrupted',
          `This server process is stopping while build ${submission.buildId} runs on another one; its ` +
            'outcome will be in the build history (GET P/builds).',
        );
      }
      // A worker of another project sharing the queue says why in the job, not in this project's history.
      throw new DomainError('build_failed', run?.error ?? errorMessage(error));
    } finally {
      const run = await this.runs.findById(submission.buildId).catch(() => null);
      await this.audit.recordBy(caller, 'build', submission.buildId, {
        status: run?.status ?? 'unknown',
        error: run?.error ?? null,
      });
    }
  }

  /**
   * `POST P/build` with `Prefer: respond-async`: queues a build and answers at once with its run, as
   * `GET P/builds/{id}` will go on answering it. Audited when accepted (nobody waits for its end here; the
   * history has it).
   */
  async start(caller: AdminCaller): Promise<BuildRun> {
    const submission = await this.requested(caller);
    // The runner records and logs how it ends; the build goes on if this process stops.
    submission.done.catch(() => undefined);
    const run = await this.runs.findById(submission.buildId);
    await this.audit.recordBy(caller, 'build', submission.buildId, {
      status: run?.status ?? 'unknown',
      error: null,
      respond: 'async',
    });
    if (!run) throw new Error(`build ${submission.buildId} was queued without its run`);
    return run;
  }

  /** A build asked for through the API: queued, or 400 `build_in_progress`. */
  private async requested(caller: AdminCaller): Promise<QueuedBuild> {
    const submission = await this.submitter.submit(caller.username, 'request');
    if (!submission) {
      throw new DomainError(
        'build_in_progress',
        'A build is already queued or running; try again when it finishes',
      );
    }
    return submission;
  }
}

/**
 * What a failed run answers a waiting `POST P/build`: interrupted (the process stopped), the project's
 * fault (400 `invalid_project`: fix the project, then build again), or the infrastructure's (500
 * `build_failed`). A run from before faults were recorded says only whether it was interrupted.
 */
function failureCode(run: BuildRun): ErrorCode {
  if (run.fault === 'interrupted' || wasInterrupted(run.error)) return 'build_interrupted';
  return run.fault === 'project' ? 'invalid_project' : 'build_failed';
}
