import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Histogram } from 'prom-client';
import type { BuildJob, BuildJobRunner } from '@/builds/build-job';
import { JsonLogger } from '@/runtime/json-logger';
import { EnvironmentSync } from '@/builds/environment-sync.service';
import type {
  BuildFault,
  BuildRunProgress,
  ModelBuildFigures,
} from '@/database/tables/build-runs.entity';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import {
  BuildError,
  BuildInterruptedError,
  type BuildProgress,
} from '@/engine/materialize/materialize-environment';
import type { Project } from '@/core/project/project';
import { ProjectError } from '@/core/project-errors';
import { loadProject } from '@/core/project/project-loader';
import { throwIfProblems } from '@/engine/check/check-models';
import { Engine } from '@/engine/engine';
import { MetricsService } from '@/metrics/metrics.service';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';

/** The error a run cut off by a crash is recorded with. */
export const INTERRUPTED = 'Interrupted: the server process stopped during the build';

/**
 * The error a run stopped by a signal is recorded with. An interrupted build is recorded as `failed` with
 * this error rather than with a status of its own: the history's four statuses are the documented
 * contract (interface and typed clients switch on them), and "failed, starting with Interrupted" already
 * means the same for a run cut off by a crash ({@link INTERRUPTED}).
 */
export function interruptedBy(reason: string): string {
  return (
    `Interrupted by ${reason}: the server process was stopped during the build, whose partial ` +
    'environment was removed; the previous build, if any, is still the one served. Start a new build ' +
    'once the service runs again.'
  );
}

/** Whether a run's recorded error says it was interrupted (by a signal or a crash), not that it failed. */
export function wasInterrupted(error: string | null | undefined): boolean {
  return error?.startsWith('Interrupted') ?? false;
}

/**
 * What runs a build: the BullMQ worker (`BuildsProcessor`) or the in-process queue calls {@link run} on
 * whichever process takes the job. Queueing and the history are {@link BuildsService}'s.
 */
@Injectable()
export class BuildRunner implements BuildJobRunner {
  private readonly durations: Histogram<'status'>;
  /** The run of this process, to be interrupted on a signal. */
  private current?: { abort: AbortController; settled: Promise<void> };
  /** Set once the process is stopping: a build that would start now is recorded as interrupted. */
  private stopping?: string;
  /** Told of each build this process ran once it is recorded as finished (build notifications). */
  private readonly finishedListeners: ((buildId: string) => void)[] = [];

  constructor(
    private readonly runs: BuildRunsRepository,
    private readonly engine: Engine,
    private readonly parameters: ParameterCatalogService,
    private readonly logger: JsonLogger,
    private readonly sync: EnvironmentSync,
    metrics: MetricsService,
  ) {
    this.durations = new Histogram({
      name: 'drey_build_duration_seconds',
      help: 'Builds of the virtual data environment run by this process, by outcome',
      labelNames: ['status'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [metrics.registry],
    });
  }

  /** Runs one build, recording it in the history; rejects with the build's error when it fails. */
  async run(job: BuildJob): Promise<void> {
    const abort = new AbortController();
    if (this.stopping) abort.abort(this.stopping);
    const serves = this.engine.environments.identity;
    if (job.project !== undefined && job.project !== serves) {
      // Queued by a process of another project on the same queue: building this one instead would report
      // its build done while it changed nothing there.
      const message =
        `a server of ${serves} took this build of ${job.project} from the builds queue they share ` +
        '(the same REDIS_URL and REDIS_PREFIX): give each project its own REDIS_PREFIX';
      this.logger.emit('error', 'build of another project refused', {
        buildId: job.buildId,
        project: job.project,
        serves,
      });
      await this.runs.markFailed(job.buildId, message, 'infrastructure').catch(() => undefined);
      throw new BuildError(message, undefined, 'infrastructure');
    }
    // This process serves its new build before the store names it: it must not follow the store back
    // to the previous one meanwhile.
    const run = this.sync.whileBuilding(() => this.runHere(job, abort.signal));
    const current = { abort, settled: run.then(undefined, () => undefined) };
    this.current = current;
    try {
      return await run;
    } finally {
      if (this.current === current) this.current = undefined;
    }
  }

  /**
   * Calls `listener` with the id of each build this process runs, once its end is recorded. The listener
   * must not wait on anything: the build is not done until it returns. (The webhooks feature, a floor
   * above, listens: builds do not know who.)
   */
  onFinished(listener: (buildId: string) => void): void {
    this.finishedListeners.push(listener);
  }

  private announceFinished(buildId: string): void {
    for (const listener of this.finishedListeners) {
      try {
        listener(buildId);
      } catch (error) {
        this.logger.emit('error', 'build end not announced', {
          buildId,
          error: errorMessage(error),
        });
      }
    }
  }

  /**
   * A build of the schedule's, taken from the BullMQ queue: recorded in the history (as `schedule`) when
   * it starts, since the scheduler's job carries no row of its own.
   */
  async runScheduled(project: string): Promise<void> {
    const buildId = randomUUID();
    await this.runs.insertQueued(buildId, null, project, 'schedule');
    this.logger.emit('info', 'scheduled build', { buildId });
    return this.run({ buildId, project });
  }

  /**
   * The process is stopping (`reason`: the signal): the build running here, if any, is interrupted, and
   * resolves once it is recorded as such (its partial file removed); a build that would start afterwards
   * is recorded as interrupted at once.
   */
  async interrupt(reason: string): Promise<void> {
    this.stopping ??= reason;
    const current = this.current;
    if (!current) return;
    this.logger.emit('warn', 'interrupting the build', { reason });
    current.abort.abort(reason);
    await current.settled;
  }

  private async runHere(job: BuildJob, signal: AbortSignal): Promise<void> {
    const { buildId } = job;
    // Builds of a project run one at a time everywhere: any other unfinished one was cut off by a crash.
    await this.runs.failUnfinishedExcept(buildId, INTERRUPTED, this.engine.environments.identity);
    await this.runs.markRunning(buildId);
    const started = Date.now();
    this.logger.emit('info', 'build started', { buildId });
    const tracker = new ProgressTracker(buildId, this.runs, this.logger);
    try {
      // The project folder is read again, whole: an edited model, seed, parameter or template is built
      // and served together; an invalid project fails the build with its problems listed.
      const project = reloadProject(this.engine.project);
      const result = await this.engine.build(
        buildId,
        {
          signal,
          onProgress: (progress) => {
            this.logger.emit('debug', 'build progress', { buildId, ...progress });
            tracker.update(progress);
          },
          beforeSwitch: async (built) => {
            const catalog = await this.parameters.prepareFor(buildId, built);
            // The SQL of every runtime model, planned on the new tables: a project whose SQL would fail
            // at request time fails its build instead, and the previous environment keeps serving.
            throwIfProblems(await built.checkModels(catalog));
          },
        },
        project,
      );
      await tracker.settled();
      // Before the build is said done: the other replicas switch within a poll of its end.
      await this.sync.publish(buildId, result.file);
      await this.runs.markSucceeded(
        buildId,
        result.file.split('/').pop() ?? null,
        result.models.map((model) => ({
          model: model.model,
          kind: model.kind,
          rows: model.rows,
          durationMs: Math.round(model.durationMs),
        })),
      );
      this.durations.observe({ status: 'succeeded' }, (Date.now() - started) / 1000);
      this.logger.emit('info', 'build succeeded', {
        buildId,
        models: result.models.length,
        durationMs: Date.now() - started,
      });
      this.announceFinished(buildId);
    } catch (error) {
      const interrupted = error instanceof BuildInterruptedError;
      const message = interrupted ? interruptedBy(error.reason) : errorMessage(error);
      await tracker.settled();
      await this.runs.markFailed(
        buildId,
        message,
        faultOf(error),
        tracker.failedAt(failedModel(error)),
      );
      this.announceFinished(buildId);
      this.durations.observe({ status: 'failed' }, (Date.now() - started) / 1000);
      if (interrupted) {
        this.logger.emit('warn', 'build interrupted', { buildId, reason: error.reason });
      } else {
        this.logger.emit('error', 'build failed', { buildId, error: message });
      }
      throw error instanceof Error ? error : new Error(message);
    }
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const model = (error as { model?: unknown }).model;
    return typeof model === 'string' && !error.message.includes(model)
      ? `Model "${model}": ${error.message}`
      : error.message;
  }
  return String(error);
}

/**
 * Whose fault a build's failure is, as its run records it: the project's when the project is invalid or
 * its SQL failed (the engine's {@link BuildError} says which), nobody's when the process was stopping,
 * the infrastructure's otherwise (the history or the build store in Postgres, the queue).
 */
export function faultOf(error: unknown): BuildFault {
  if (error instanceof BuildInterruptedError) return 'interrupted';
  if (error instanceof BuildError) return error.fault;
  if (error instanceof ProjectError) return 'project';
  return 'infrastructure';
}

function failedModel(error: unknown): string | null {
  const model = (error as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : null;
}

/**
 * A running build's progress, written to its row as each model starts and ends, so that the history shows
 * it on every replica. Writes go one after another, in order; one that fails is logged, never fatal.
 */
class ProgressTracker {
  private readonly models: ModelBuildFigures[] = [];
  private progress: BuildRunProgress = { done: 0, total: 0, current: null, failedModel: null };
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly buildId: string,
    private readonly runs: BuildRunsRepository,
    private readonly logger: JsonLogger,
  ) {}

  update(step: BuildProgress): void {
    if (step.status === 'done') {
      this.models.push({
        model: step.model,
        kind: step.kind,
        rows: step.rows ?? 0,
        durationMs: Math.round(step.durationMs ?? 0),
      });
    }
    this.progress = {
      done: this.models.length,
      total: step.steps,
      current: step.status === 'started' ? { model: step.model, kind: step.kind } : null,
      failedModel: null,
    };
    const models = [...this.models];
    const progress = this.progress;
    this.writes = this.writes
      .then(() => this.runs.recordProgress(this.buildId, models, progress))
      .catch((error: unknown) =>
        this.logger.emit('warn', 'build progress not recorded', {
          buildId: this.buildId,
          error: errorMessage(error),
        }),
      );
  }

  settled(): Promise<void> {
    return this.writes;
  }

  /** The models finished and where the build stopped, naming the model that failed. */
  failedAt(model: string | null): { models: ModelBuildFigures[]; progress: BuildRunProgress } {
    const current = this.progress.current?.model ?? null;
    return {
      models: [...this.models],
      progress: { ...this.progress, current: null, failedModel: model ?? current },
    };
  }
}

/**
 * The project folder of `served`, loaded again. Its name and major version name the API's paths, which are
 * routed from the start: a build may not change them (a restart serves the renamed project).
 */
function reloadProject(served: Project): Project {
  const project = loadProject(served.dir);
  if (project.name !== served.name || project.majorVersion !== served.majorVersion) {
    throw new BuildError(
      `the project's name and major version (${project.name} v${project.majorVersion}) differ from the ` +
        `ones served (${served.name} v${served.majorVersion}), which name the API's paths: restart the ` +
        'service to serve them',
      undefined,
      'project',
    );
  }
  return project;
}
