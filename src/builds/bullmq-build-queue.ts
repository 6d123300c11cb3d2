import { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Queue, QueueEvents } from 'bullmq';
import type { BuildJob, ScheduledBuildJob } from '@/builds/build-job';
import type { BuildSchedule } from '@/core/project/build-schedule';
import { BUILDS_QUEUE, BuildQueue, Submission } from '@/builds/build-queue';
import { redisErrorLogger } from '@/builds/redis-error-log';
import type { JsonLogger } from '@/runtime/json-logger';

// One deduplication key for every build: while a build job is queued or running, adding another returns
// the existing job instead, atomically in Redis, whichever process asks.
const DEDUPLICATION_ID = 'build';

/** The builds queue on Redis; the jobs are run by the BullMQ worker, `BuildsProcessor`, of any process. */
export class BullBuildQueue extends BuildQueue implements OnModuleInit, OnApplicationShutdown {
  readonly kind = 'bullmq' as const;
  private events?: QueueEvents;

  /** The queue that {@link BuildsModule.transport} registers (BullMQ closes it on shutdown). */
  constructor(
    private readonly queue: Queue<BuildJob | ScheduledBuildJob>,
    private readonly logger: JsonLogger,
  ) {
    super();
    // Without a listener BullMQ prints connection errors to stderr itself, outside the JSON log.
    queue.on('error', redisErrorLogger(logger, 'builds queue'));
  }

  async onModuleInit(): Promise<void> {
    // A second process must not run a second build even with its own worker.
    await this.queue.setGlobalConcurrency(1);
    this.events = new QueueEvents(BUILDS_QUEUE, {
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
    });
    this.events.on('error', redisErrorLogger(this.logger, 'builds queue events'));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.events?.close();
  }

  async submit(job: BuildJob): Promise<Submission> {
    const added = await this.queue.add('build', job, {
      jobId: job.buildId,
      deduplication: { id: DEDUPLICATION_ID },
      removeOnComplete: { count: 100 },
      removeOnFail: { count: 100 },
      attempts: 1,
    });
    if (added.id !== job.buildId) return { accepted: false };
    const events = this.events;
    if (!events) throw new Error('Build queue not initialised');
    const done = added.waitUntilFinished(events).then(() => undefined);
    done.catch(() => undefined);
    return { accepted: true, done };
  }

  async busy(): Promise<boolean> {
    // Not `delayed`: the schedule's next build waits there until its time.
    const counts = await this.queue.getJobCounts('waiting', 'active', 'prioritized');
    return Object.values(counts).some((count) => count > 0);
  }

  async ping(): Promise<void> {
    await this.queue.getGlobalConcurrency();
  }

  /**
   * A BullMQ job scheduler, one per project in Redis whichever replica sets it (setting it again with the
   * same schedule changes nothing): it keeps the next build as a delayed job, so that one worker runs
   * each time the schedule names. After an outage the job that was due runs once, and the next one is
   * the schedule's next time from then: missed times are not all run.
   */
  async schedule(schedule: BuildSchedule | undefined, project: string): Promise<void> {
    const id = `schedule:${project}`;
    if (!schedule) {
      await this.queue.removeJobScheduler(id);
      return;
    }
    const existing = await this.queue.getJobScheduler(id);
    if (existing?.pattern === schedule.pattern && existing.tz === schedule.timezone) return;
    await this.queue.upsertJobScheduler(
      id,
      { pattern: schedule.pattern, tz: schedule.timezone },
      {
        name: 'build',
        data: { trigger: 'schedule', project },
        opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 },
      },
    );
  }
}
