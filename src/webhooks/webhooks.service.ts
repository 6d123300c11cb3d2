import { Injectable, OnModuleInit } from '@nestjs/common';
import { BuildRunner } from '@/builds/build-runner';
import { JsonLogger } from '@/runtime/json-logger';
import { WebhookQueue } from '@/webhooks/webhook-queue';
import { WebhookSender } from '@/webhooks/webhook-sender';

/** Build notifications: told by the build runner of each build this process ran, once it ended. */
@Injectable()
export class WebhooksService implements OnModuleInit {
  constructor(
    private readonly sender: WebhookSender,
    private readonly queue: WebhookQueue,
    private readonly logger: JsonLogger,
    private readonly runner: BuildRunner,
  ) {}

  onModuleInit(): void {
    this.runner.onFinished((buildId) => this.buildFinished(buildId));
  }

  /**
   * Queues the event of a finished build for every webhook. Never blocks the build and never fails it: the
   * deliveries are recorded and sent afterwards; a fault here is logged.
   */
  buildFinished(buildId: string): void {
    if (!this.sender.enabled) return;
    this.sender
      .record(buildId)
      .then((ids) => this.queue.enqueue(ids))
      .catch((error: unknown) =>
        this.logger.emit('error', 'build event not queued for webhooks', {
          buildId,
          error: (error as Error).message,
        }),
      );
  }
}
