import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AuditService } from '@/audit/audit.service';
import type { AdminCaller } from '@/core/caller';
import { BuildQueue } from '@/builds/build-queue';
import { BuildHistory } from '@/builds/build-history';
import { BuildRequests } from '@/builds/build-requests';
import { BuildRunner, errorMessage } from '@/builds/build-runner';
import { BuildSubmitter } from '@/builds/build-submitter';
import { OperatorBuilds } from '@/builds/operator-builds';
import { JsonLogger } from '@/runtime/json-logger';
import { startupStep } from '@/runtime/startup-step';
import type { BuildRun } from '@/database/tables/build-runs.entity';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import type { BuildSchedule } from '@/core/project/build-schedule';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import type { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';
import { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import { Engine } from '@/engine/engine';
import { BuildInterruptedError } from '@/engine/materialize/materialize-environment';
import { EnvironmentSync } from '@/builds/environment-sync.service';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import { describeProblem, ProjectError } from '@/core/project-errors';
import type { Project } from '@/core/project/project';
import { MetricsService } from '@/metrics/metrics.service';

/**
 * Builds of the virtual data environment: queued on the builds queue (one at a time across processes) and
 * recorded in Postgres; {@link BuildRunner} runs them, called by the queue's worker.
 */
@Injectable()
export class BuildsService implements OnApplicationBootstrap {
  private readonly submitter: BuildSubmitter;
  private readonly requests: BuildRequests;
  private readonly operator: OperatorBuilds;
  private readonly buildHistory: BuildHistory;

  constructor(
    runs: BuildRunsRepository,
    private readonly runner: BuildRunner,
    queue: BuildQueue,
    private readonly engine: Engine,
    private readonly sync: EnvironmentSync,
    private readonly parameters: ParameterCatalogService,
    audit: AuditService,
    private readonly logger: JsonLogger,
    metrics: MetricsService,
    @Inject(APP_CONFIG) config: AppConfig,
    deliveries: WebhookDeliveriesRepository,
  ) {
    this.submitter = new BuildSubmitter(runs, queue, engine, logger);
    this.buildHistory = new BuildHistory(runs, deliveries, queue, engine, logger);
    this.requests = new BuildRequests(this.submitter, runs, audit);
    this.operator = new OperatorBuilds(this.submitter, queue, engine, logger, config);
    new Gauge({
      name: 'drey_build_queue_busy',
      help: '1 while a build is queued or running, on any process sharing the queue',
      registers: [metrics.registry],
      async collect() {
        this.set((await queue.busy().catch(() => false)) ? 1 : 0);
      },
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.buildHistory.markInterrupted();
    // A build published while this process was away (or before its DATA_DIR existed) is served first.
    await this.sync.catchUp();
    await this.operator.startSchedule();
    const missing = await this.engine.missingTables();
    if (missing && missing.length > 0) {
      // The build found predates models of the project (another checkout built it, or models were added
      // since): it goes on serving what it can, readiness says it cannot answer every dataset, and a build
      // of the project as it is now replaces it.
      this.logger.emit('warn', 'the build served lacks tables of the project: rebuilding', {
        buildId: this.engine.environments.currentId,
        missing,
      });
      await this.operator.rebuild('the build served lacks tables of the project');
    } else if (this.engine.ready) {
      await this.checkServedProject();
    } else {
      const foreign = this.engine.environments.foreign;
      if (foreign) {
        this.logger.emit('info', 'building: the data folder holds no build of this project', {
          found: foreign.buildId,
          builtFrom: foreign.identity ?? 'unknown (built by an earlier version)',
          serves: this.engine.environments.identity,
        });
      }
      // The first start builds; readiness waits for it. Another process may already be building.
      void this.firstBuild();
    }
  }

  /**
   * Served from an earlier build, the project's SQL (perhaps edited since) must still plan on it. When it
   * does not, or the folder did not load at all (main.ts then started with the project kept with that
   * build), the build goes on serving the project it was built from, as after a failed build, and the log
   * says what is wrong, where, and what to do: fix the files (a rebuild of the same files would fail the
   * same way), or, when the build models changed since, a build is started here for the new tables.
   */
  private async checkServedProject(): Promise<void> {
    const served = this.engine.project;
    startupStep(this.logger, "checking the project's SQL on the build served", {
      buildId: this.engine.environments.currentId,
    });
    const problems = await this.engine.checkModels(await this.parameters.catalog());
    if (problems.length === 0) {
      // What a later start falls back to when the folder no longer checks out.
      this.engine.keepServedProject();
      return;
    }
    const kept = this.engine.keptProject();
    if (!kept) {
      // A build made by an earlier version kept no project: nothing else to serve it with.
      const error = new ProjectError(problems);
      error.message +=
        '\n(planned on the build served, which kept no copy of the project it was built from: fix the ' +
        'files named above; if a build model changed since, `npm run drey -- build` makes its tables)';
      throw error;
    }
    await this.engine.serveWithCurrentBuild(kept.project);
    const buildModelsChanged = builtModels(served) !== builtModels(kept.project);
    this.logger.emit('error', 'the project does not check out: serving the last good build', {
      buildId: kept.buildId,
      projectDir: served.dir,
      problems: problems.map(describeProblem),
      hint: buildModelsChanged
        ? 'its build models changed since that build: building the project as it is now; if that ' +
          'build fails too, fix the files named, then save (drey dev) or rebuild (POST P/build, SIGHUP)'
        : 'fix the files named, then save (drey dev) or rebuild (POST P/build, SIGHUP); until then the ' +
          'project as it was at that build is served',
    });
    if (buildModelsChanged)
      await this.operator.rebuild('the project checks out only with new tables');
  }

  /** The schedule builds run on, if any: {@link OperatorBuilds.schedule}. */
  get schedule(): BuildSchedule | undefined {
    return this.operator.schedule;
  }

  private async firstBuild(): Promise<void> {
    try {
      const submission = await this.submitter.submit(null, 'start');
      await submission?.done;
    } catch (error) {
      // The queue may lose track of a build that ran (Redis gone as it finished: "stalled"); the history,
      // written by the runner, says how it really ended.
      if (this.engine.ready) return;
      // Nobody awaits the first build, so nothing here may reject: a SIGTERM during it interrupts the build
      // and then closes the database, and reading the history could fail (an unhandled rejection made the
      // stopping process exit 1). The runner has recorded how the build ended either way.
      if (error instanceof BuildInterruptedError) {
        this.logger.emit('info', 'first build interrupted', { error: errorMessage(error) });
        return;
      }
      await this.buildHistory.whyNotServing().catch((reading: unknown) =>
        this.logger.emit('warn', 'why the first build failed could not be read', {
          error: errorMessage(reading),
        }),
      );
      // Recorded in the history by the runner; the service keeps answering 503 not_ready for data.
      this.logger.emit('error', 'first build failed', { error: errorMessage(error) });
    }
  }

  /** SIGHUP and `drey dev`: {@link OperatorBuilds.rebuild}. False while another build is queued or running. */
  rebuild(reason: string): Promise<boolean> {
    return this.operator.rebuild(reason);
  }

  /**
   * The process is stopping on `signal`: the build running here is interrupted and recorded so, then every
   * `POST P/build` still waiting is answered (503), so that the server closes its connections on time
   * rather than cutting them. Resolves once the build is recorded.
   */
  async stop(signal: string): Promise<void> {
    await this.runner.interrupt(signal);
    this.requests.stop();
  }

  /** `POST P/build`, waiting for the build's end: {@link BuildRequests.build}. */
  build(caller: AdminCaller): Promise<void> {
    return this.requests.build(caller);
  }

  /** `POST P/build` with `Prefer: respond-async`: {@link BuildRequests.start}. */
  start(caller: AdminCaller): Promise<BuildRun> {
    return this.requests.start(caller);
  }

  /** `GET P/builds/{id}`: {@link BuildHistory.find}. */
  find(id: string): Promise<{ run: BuildRun; notifications: WebhookDelivery[] }> {
    return this.buildHistory.find(id);
  }

  /** Why no data is served, for readiness and data requests: {@link BuildHistory.whyNotServing}. */
  whyNotServing(): Promise<string | undefined> {
    return this.buildHistory.whyNotServing();
  }

  /** `GET P/builds`, newest first: {@link BuildHistory.history}. */
  history(limit = 50): Promise<{ run: BuildRun; notifications: WebhookDelivery[] }[]> {
    return this.buildHistory.history(limit);
  }
}

/** What a build makes of a project (its seeds, sources and build models): equal text, equal tables. */
function builtModels(project: Project): string {
  return JSON.stringify(
    project.models.filter(
      (model) => model.kind === 'seed' || model.kind === 'source' || model.kind === 'build',
    ),
  );
}
