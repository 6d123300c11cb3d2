import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, In, LessThan, Not, Repository } from 'typeorm';
import { AuditService } from '@/audit/audit.service';
import type { Caller } from '@/core/caller';
import { BuildJob, BuildQueue } from '@/builds/build-queue';
import { BuildRun } from '@/builds/build-run.entity';
import { DomainError, NotReadyError } from '@/core/errors';
import { JsonLogger } from '@/common/json-logger';
import { Engine } from '@/engine/engine';
import { MetricsService } from '@/metrics/metrics.service';
import { ParametersService } from '@/parameters/parameters.service';
import { Histogram } from 'prom-client';

// A queue store that does not answer within this time is down: say so instead of hanging.
const SUBMIT_TIMEOUT_MS = 5000;
const STALE_QUEUED_MS = 60_000;
const INTERRUPTED = 'Interrupted: the server process stopped during the build';

/**
 * Builds of the virtual data environment: queued on the builds queue (one at a time across processes),
 * recorded in Postgres with per-model figures, logged step by step.
 */
@Injectable()
export class BuildsService implements OnApplicationBootstrap {
  private readonly runs: Repository<BuildRun>;
  private readonly durations: Histogram<'status'>;

  constructor(
    dataSource: DataSource,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly parameters: ParametersService,
    private readonly audit: AuditService,
    private readonly logger: JsonLogger,
    metrics: MetricsService,
  ) {
    this.runs = dataSource.getRepository(BuildRun);
    this.durations = new Histogram({
      name: 'drey_build_duration_seconds',
      help: 'Builds of the virtual data environment run by this process, by outcome',
      labelNames: ['status'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [metrics.registry],
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.queue.setHandler((job) => this.execute(job));
    await this.markInterrupted();
    if (!this.engine.ready) {
      // The first start builds; readiness waits for it. Another process may already be building.
      void this.firstBuild();
    }
  }

  private async firstBuild(): Promise<void> {
    try {
      const submission = await this.submit(null);
      await submission?.done;
    } catch (error) {
      // Recorded in the history by execute(); the service keeps answering 503 not_ready for data.
      this.logger.emit('error', 'first build failed', { error: errorMessage(error) });
    }
  }

  /** `POST P/build`: queues a build and waits for it. 400 while another is queued or running. */
  async build(caller: Caller): Promise<void> {
    const submission = await this.submit(caller.username);
    if (!submission) {
      throw new DomainError(
        'build_in_progress',
        'A build is already queued or running; try again when it finishes',
      );
    }
    try {
      await submission.done;
    } catch {
      const run = await this.runs.findOneBy({ id: submission.buildId });
      throw new DomainError('build_failed', run?.error ?? 'The build failed');
    } finally {
      const run = await this.runs.findOneBy({ id: submission.buildId }).catch(() => null);
      await this.audit.recordBy(caller, 'build', submission.buildId, {
        status: run?.status ?? 'unknown',
        error: run?.error ?? null,
      });
    }
  }

  /** Build history, newest first. */
  async history(limit = 50): Promise<BuildRun[]> {
    await this.markInterrupted();
    return this.runs.find({ order: { queuedAt: 'DESC' }, take: limit });
  }

  private async submit(
    requestedBy: string | null,
  ): Promise<{ buildId: string; done: Promise<void> } | undefined> {
    const buildId = randomUUID();
    await this.runs.insert({ id: buildId, status: 'queued', requestedBy, models: [] });
    let timer: NodeJS.Timeout | undefined;
    // On a timeout the run stays queued: if the store comes back and takes the job after all, it runs.
    try {
      const submission = await Promise.race([
        this.queue.submit({ buildId }),
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
        await this.runs.delete({ id: buildId });
        return undefined;
      }
      this.logger.emit('info', 'build queued', { buildId, requestedBy });
      return { buildId, done: submission.done };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs one build; called by the queue's worker on whichever process takes the job. */
  private async execute(job: BuildJob): Promise<void> {
    const { buildId } = job;
    // Builds run one at a time everywhere: any other unfinished build was cut off by a crash.
    await this.runs.update({ status: In(['queued', 'running']), id: Not(buildId) }, interrupted());
    await this.runs.update({ id: buildId }, { status: 'running', startedAt: new Date() });
    const started = Date.now();
    this.logger.emit('info', 'build started', { buildId });
    try {
      const result = await this.engine.build(buildId, {
        onProgress: (progress) =>
          this.logger.emit('info', 'build progress', { buildId, ...progress }),
        beforeSwitch: (built) => this.parameters.prepareFor(buildId, built),
      });
      await this.runs.update(
        { id: buildId },
        {
          status: 'succeeded',
          finishedAt: new Date(),
          environmentFile: result.file.split('/').pop() ?? null,
          models: result.models.map((model) => ({
            model: model.model,
            kind: model.kind,
            rows: model.rows,
            durationMs: Math.round(model.durationMs),
          })),
        },
      );
      this.durations.observe({ status: 'succeeded' }, (Date.now() - started) / 1000);
      this.logger.emit('info', 'build succeeded', { buildId, durationMs: Date.now() - started });
    } catch (error) {
      const message = errorMessage(error);
      await this.runs.update(
        { id: buildId },
        { status: 'failed', finishedAt: new Date(), error: message },
      );
      this.durations.observe({ status: 'failed' }, (Date.now() - started) / 1000);
      this.logger.emit('error', 'build failed', { buildId, error: message });
      throw error instanceof Error ? error : new Error(message);
    }
  }

  /**
   * Builds left queued or running by a process that died are failed, and their partial files removed,
   * unless the queue still holds a build (which may be alive on another process).
   */
  private async markInterrupted(): Promise<void> {
    if (await this.queue.busy().catch(() => true)) return;
    // A run inserted a moment ago may not have reached the queue yet: only old queued runs are stale.
    const running = await this.runs.update({ status: 'running' }, interrupted());
    const queued = await this.runs.update(
      { status: 'queued', queuedAt: LessThan(new Date(Date.now() - STALE_QUEUED_MS)) },
      interrupted(),
    );
    const affected = (running.affected ?? 0) + (queued.affected ?? 0);
    if (affected > 0) {
      const removed = this.engine.environments.sweep();
      this.logger.emit('warn', 'interrupted builds marked failed', { builds: affected, removed });
    }
  }
}

function interrupted(): Partial<BuildRun> {
  return { status: 'failed', finishedAt: new Date(), error: INTERRUPTED };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const model = (error as { model?: unknown }).model;
    return typeof model === 'string' && !error.message.includes(model)
      ? `Model "${model}": ${error.message}`
      : error.message;
  }
  return String(error);
}
