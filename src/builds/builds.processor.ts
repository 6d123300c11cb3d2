import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { BUILDS_QUEUE, BuildJob } from '@/builds/build-queue';
import { BullBuildQueue } from '@/builds/bullmq-build-queue';

/** The BullMQ worker of this process: one build at a time. */
@Processor(BUILDS_QUEUE, { concurrency: 1 })
export class BuildsProcessor extends WorkerHost {
  constructor(private readonly queue: BullBuildQueue) {
    super();
  }

  process(job: Job<BuildJob>): Promise<void> {
    return this.queue.run(job);
  }
}
