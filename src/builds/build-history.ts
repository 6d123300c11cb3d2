import type { BuildQueue } from '@/builds/build-queue';
import { INTERRUPTED } from '@/builds/build-runner';
import { NotFoundError } from '@/core/errors';
import type { BuildRun } from '@/database/tables/build-runs.entity';
import type { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import type { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';
import type { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import type { Engine } from '@/engine/engine';
import type { JsonLogger } from '@/runtime/json-logger';

const STALE_QUEUED_MS = 60_000;

/**
 * The build history of this project as the API shows it (every run, or one, with its notifications), and
 * what it says while nothing is served. Runs a dead process left queued or running are failed as it is read.
 */
export class BuildHistory {
  constructor(
    private readonly runs: BuildRunsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * The project built here, `expenses v1`: its runs are the history this service shows and the builds it
   * may fail as interrupted; other projects sharing the database have their own.
   */
  private get identity(): string {
    return this.engine.environments.identity;
  }

  /** One build of the history, `GET P/builds/{id}`: 404 for an id of no build of this project. */
  async find(id: string): Promise<{ run: BuildRun; notifications: WebhookDelivery[] }> {
    await this.markInterrupted();
    const run = await this.runs.findById(id);
    // Runs from before runs named their project belong to whichever project reads them, as in history().
    if (!run || (run.project !== null && run.project !== this.identity)) {
      throw new NotFoundError(`No build ${id} of this project`);
    }
    const deliveries = await this.deliveries.forBuilds([run.id]);
    return { run, notifications: deliveries.get(run.id) ?? [] };
  }

  /** Build history, newest first, each build with its events' deliveries to the webhooks. */
  async history(limit = 50): Promise<{ run: BuildRun; notifications: WebhookDelivery[] }[]> {
    await this.markInterrupted();
    const runs = await this.runs.newest(limit, this.identity);
    const deliveries = await this.deliveries.forBuilds(runs.map((run) => run.id));
    return runs.map((run) => ({ run, notifications: deliveries.get(run.id) ?? [] }));
  }

  /**
   * While no environment is open: why, when a build has failed since the last one that succeeded (the
   * first build, say), as a sentence for every client; undefined while the first build is still to come.
   * Data requests answer it too (503 `not_ready`, without Retry-After), on this process and, through the
   * history in Postgres, on any other that asks. The build's error itself is in the history and the log.
   */
  async whyNotServing(): Promise<string | undefined> {
    if (this.engine.ready) return undefined;
    const [latest] = await this.runs.newest(1, this.identity);
    const reason =
      latest?.status === 'failed'
        ? `No data is served yet: the build ${latest.id} failed` +
          (latest.progress?.failedModel ? ` (model "${latest.progress.failedModel}")` : '') +
          '. An administrator can read why in the build history (GET P/builds) and start a new ' +
          'build with POST P/build once the project is fixed.'
        : undefined;
    this.engine.environments.explainUnavailable(reason);
    return reason;
  }

  /**
   * Builds left queued or running by a process that died are failed, and their partial files removed,
   * unless the queue still holds a build (which may be alive on another process).
   */
  async markInterrupted(): Promise<void> {
    if (await this.queue.busy().catch(() => true)) return;
    // A run inserted a moment ago may not have reached the queue yet: only old queued runs are stale.
    const affected = await this.runs.failStale(
      new Date(Date.now() - STALE_QUEUED_MS),
      INTERRUPTED,
      this.identity,
    );
    if (affected > 0) {
      const removed = this.engine.environments.sweep();
      this.logger.emit('warn', 'interrupted builds marked failed', { builds: affected, removed });
    }
  }
}
