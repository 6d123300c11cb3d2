import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { AuditModule } from '@/audit/audit.module';
import type { BuildJob, ScheduledBuildJob } from '@/builds/build-job';
import { BUILDS_QUEUE, BuildQueue, InProcessBuildQueue } from '@/builds/build-queue';
import { BuildRunner } from '@/builds/build-runner';
import { BullBuildQueue } from '@/builds/bullmq-build-queue';
import { JsonLogger } from '@/runtime/json-logger';
import { BuildsProcessor } from '@/builds/builds.processor';
import { BuildsService } from '@/builds/builds.service';
import { EnvironmentSync } from '@/builds/environment-sync.service';
import { redisConnection } from '@/builds/redis-connection';
import type { AppConfig } from '@/config/config';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';

/**
 * Builds: the queue (BullMQ on Redis when REDIS_URL is set, otherwise in this process, behind the same
 * interface), what runs a build ({@link BuildRunner}) and the history. With Redis, the BullMQ worker
 * {@link BuildsProcessor} calls the runner; without it, the in-process queue does.
 */
@Module({
  imports: [AuditModule, MetricsModule, ParameterCatalogModule],
  providers: [
    BuildRunner,
    BuildsService,
    EnvironmentSync,
    BuildsProcessor,
    {
      provide: BuildQueue,
      // The BullMQ queue exists when the transport was imported, that is with Redis.
      inject: [BuildRunner, JsonLogger, { token: getQueueToken(BUILDS_QUEUE), optional: true }],
      useFactory: (
        runner: BuildRunner,
        logger: JsonLogger,
        queue?: Queue<BuildJob | ScheduledBuildJob>,
      ): BuildQueue =>
        queue ? new BullBuildQueue(queue, logger) : new InProcessBuildQueue(runner),
    },
  ],
  exports: [BuildQueue, BuildsService, BuildRunner],
})
export class BuildsModule {
  /**
   * What the root module imports for builds besides this module: with Redis, BullMQ's connection and the
   * builds queue, which also starts the workers ({@link BuildsProcessor}); without it, nothing. BullMQ makes
   * its connection global; the queue is made so too, as the one transport of builds, like the database.
   */
  static transport(config: AppConfig): DynamicModule[] {
    if (!config.redisUrl) return [];
    return [
      BullModule.forRoot({
        connection: redisConnection(config.redisUrl),
        prefix: config.redisPrefix,
      }),
      { ...BullModule.registerQueue({ name: BUILDS_QUEUE }), global: true },
    ];
  }
}
