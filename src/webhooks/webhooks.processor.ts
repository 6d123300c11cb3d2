import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { redisErrorLogger } from '@/builds/redis-error-log';
import { JsonLogger } from '@/runtime/json-logger';
import { WEBHOOKS_QUEUE, type WebhookJob } from '@/webhooks/webhook-queue';
import { WebhookSender } from '@/webhooks/webhook-sender';

/** Why BullMQ should try a delivery again: the attempt failed and is recorded so. */
class RetryLater extends Error {}

/**
 * The BullMQ worker of build events: any replica sends them, a few at a time, each attempt recorded by
 * {@link WebhookSender}; a failed attempt is retried by BullMQ after its back-off.
 */
@Processor(WEBHOOKS_QUEUE, { concurrency: 4 })
export class WebhooksProcessor extends WorkerHost {
  private readonly logError: (error: Error) => void;

  constructor(
    private readonly sender: WebhookSender,
    logger: JsonLogger,
  ) {
    super();
    this.logError = redisErrorLogger(logger, 'webhooks worker');
  }

  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logError(error);
  }

  async process(job: Job<WebhookJob>): Promise<void> {
    const outcome = await this.sender.attempt(job.data.deliveryId, job.attemptsMade + 1);
    if (outcome === 'retry') throw new RetryLater('webhook attempt failed; retried after back-off');
  }
}
