import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Optional } from '@nestjs/common';
import { Job, Queue } from 'bullmq';
import { type BuildJob, isScheduled, type ScheduledBuildJob } from '@/builds/build-job';
import { BUILDS_QUEUE } from '@/builds/build-queue';
import { BuildRunner } from '@/builds/build-runner';
import { redisErrorLogger } from '@/builds/redis-error-log';
import { JsonLogger } from '@/runtime/json-logger';

/**
 * The BullMQ worker of this process: one build at a time. BullMQ starts it only when `BullModule.forRoot`
 * is imported (with Redis, see AppModule); without Redis the in-process queue runs builds instead.
 */
// A build whose process died is not retried behind the history's back: it fails, and is recorded so.
// A short lock (renewed every 5 s by a live worker) lets a crashed build be noticed within seconds, so the
// deduplication key is released and a new build can run soon after a restart.
@Processor(BUILDS_QUEUE, {
  concurrency: 1,
  maxStalledCount: 0,
  lockDuration: 10_000,
  stalledInterval: 5_000,
})
export class BuildsProcessor extends WorkerHost {
  private readonly logError: (error: Error) => void;

  constructor(
    private readonly runner: BuildRunner,
    private readonly logger: JsonLogger,
    // Absent without Redis, when BullMQ starts no worker and this class is never called.
    @Optional()
    @InjectQueue(BUILDS_QUEUE)
    private readonly queue?: Queue<BuildJob | ScheduledBuildJob>,
  ) {
    super();
    this.logError = redisErrorLogger(logger, 'builds worker');
  }

  // Without a listener BullMQ prints the worker's connection errors to stderr itself.
  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logError(error);
  }

  async process(job: Job<BuildJob | ScheduledBuildJob>): Promise<void> {
    if (!isScheduled(job.data)) return this.runner.run(job.data);
    // A build asked for already waits behind this one: it builds the same project, so the schedule's
    // turn is given to it rather than building twice in a row.
    const waiting = await this.queue!.getJobCounts('waiting', 'prioritized');
    if ((waiting.waiting ?? 0) + (waiting.prioritized ?? 0) > 0) {
      this.logger.emit('info', 'scheduled build skipped: another build is queued', {
        job: job.id,
      });
      return;
    }
    return this.runner.runScheduled(job.data.project);
  }
}
