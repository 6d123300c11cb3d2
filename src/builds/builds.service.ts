import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AuditService } from '@/audit/audit.service';
import type { AdminCaller } from '@/core/caller';
import { BuildHistory } from '@/builds/build-history';
import { BuildQueue } from '@/builds/build-queue';
import { BuildRequests } from '@/builds/build-requests';
import { BuildRunner } from '@/builds/build-runner';
import { BuildStartup } from '@/builds/build-startup';
import { BuildSubmitter } from '@/builds/build-submitter';
import { OperatorBuilds } from '@/builds/operator-builds';
import { JsonLogger } from '@/runtime/json-logger';
import type { BuildRun } from '@/database/tables/build-runs.entity';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import type { BuildSchedule } from '@/core/project/build-schedule';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import type { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';
import { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import { Engine } from '@/engine/engine';
import { EnvironmentSync } from '@/builds/environment-sync.service';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import { MetricsService } from '@/metrics/metrics.service';

/**
 * Builds of the virtual data environment: queued on the builds queue (one at a time across processes) and
 * recorded in Postgres; {@link BuildRunner} runs them, called by the queue's worker. What the controllers,
 * health and main.ts call, over one plain class per use case: the queueing of every build
 * ({@link BuildSubmitter}), the API's requests ({@link BuildRequests}), the operator's and the schedule's
 * builds ({@link OperatorBuilds}), the history ({@link BuildHistory}) and the start ({@link BuildStartup}).
 */
@Injectable()
export class BuildsService implements OnApplicationBootstrap {
  private readonly requests: BuildRequests;
  private readonly operator: OperatorBuilds;
  private readonly buildHistory: BuildHistory;
  private readonly startup: BuildStartup;

  constructor(
    runs: BuildRunsRepository,
    private readonly runner: BuildRunner,
    queue: BuildQueue,
    engine: Engine,
    sync: EnvironmentSync,
    parameters: ParameterCatalogService,
    audit: AuditService,
    logger: JsonLogger,
    metrics: MetricsService,
    @Inject(APP_CONFIG) config: AppConfig,
    deliveries: WebhookDeliveriesRepository,
  ) {
    const submitter = new BuildSubmitter(runs, queue, engine, logger);
    this.requests = new BuildRequests(submitter, runs, audit);
    this.operator = new OperatorBuilds(submitter, queue, engine, logger, config);
    this.buildHistory = new BuildHistory(runs, deliveries, queue, engine, logger);
    this.startup = new BuildStartup(
      engine,
      this.buildHistory,
      sync,
      this.operator,
      submitter,
      parameters,
      logger,
    );
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
    await this.startup.run();
  }

  /** The schedule builds run on, if any: {@link OperatorBuilds.schedule}. */
  get schedule(): BuildSchedule | undefined {
    return this.operator.schedule;
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
