import { OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { WebhookSender } from '@/webhooks/webhook-sender';
import type { JsonLogger } from '@/runtime/json-logger';

export const WEBHOOKS_QUEUE = 'webhooks';

/** A delivery on the queue: its row in `webhook_deliveries`. */
export interface WebhookJob {
  deliveryId: string;
}

/**
 * Deliveries waiting for their next attempt. BullMQ on Redis when configured (they survive a restart and any
 * replica's worker, `WebhooksProcessor`, sends them), otherwise timers in this process.
 */
export abstract class WebhookQueue {
  abstract enqueue(deliveryIds: string[]): Promise<void>;
}

/**
 * Retries with back-off on BullMQ: `attempts` and an exponential `backoff` from WEBHOOK_RETRY_BASE_MS, the
 * same schedule as {@link WebhookSender.delayBefore}.
 */
export class BullWebhookQueue extends WebhookQueue {
  constructor(
    private readonly queue: Queue<WebhookJob>,
    private readonly sender: WebhookSender,
  ) {
    super();
  }

  async enqueue(deliveryIds: string[]): Promise<void> {
    await this.queue.addBulk(
      deliveryIds.map((deliveryId) => ({
        name: 'deliver',
        data: { deliveryId },
        opts: {
          jobId: deliveryId,
          attempts: this.sender.maxAttempts,
          backoff: { type: 'exponential', delay: this.sender.delayBefore(2) },
          removeOnComplete: { count: 1000 },
          removeOnFail: { count: 1000 },
        },
      })),
    );
  }
}

/**
 * Retries with back-off on this process's timers, when there is no Redis: what is still to be retried when
 * the process stops is recorded as pending, not sent again (docs/operations.md says so).
 */
export class InProcessWebhookQueue extends WebhookQueue implements OnApplicationShutdown {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly sender: WebhookSender,
    private readonly logger: JsonLogger,
  ) {
    super();
  }

  enqueue(deliveryIds: string[]): Promise<void> {
    for (const id of deliveryIds) this.later(id, 1, 0);
    return Promise.resolve();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private later(deliveryId: string, attempt: number, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.sender.attempt(deliveryId, attempt).then(
        (outcome) => {
          if (outcome === 'retry') {
            this.later(deliveryId, attempt + 1, this.sender.delayBefore(attempt + 1));
          }
        },
        (error: unknown) =>
          this.logger.emit('error', 'webhook attempt not recorded', {
            deliveryId,
            attempt,
            error: (error as Error).message,
          }),
      );
    }, delayMs);
    // A pending retry does not keep a stopping process alive.
    timer.unref();
    this.timers.add(timer);
  }
}
