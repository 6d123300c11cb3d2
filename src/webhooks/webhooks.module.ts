import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { AppConfig } from '@/config/config';
import { JsonLogger } from '@/runtime/json-logger';
import { BuildsModule } from '@/builds/builds.module';
import { MetricsModule } from '@/metrics/metrics.module';
import {
  BullWebhookQueue,
  InProcessWebhookQueue,
  WEBHOOKS_QUEUE,
  WebhookQueue,
  type WebhookJob,
} from '@/webhooks/webhook-queue';
import { WebhookSender } from '@/webhooks/webhook-sender';
import { WebhooksProcessor } from '@/webhooks/webhooks.processor';
import { WebhooksService } from '@/webhooks/webhooks.service';

/**
 * Build notifications to the deployment's webhooks (WEBHOOK_URLS): deliveries recorded in Postgres, retried
 * on BullMQ when Redis is configured (by any replica), on this process's timers otherwise.
 */
@Module({
  imports: [MetricsModule, BuildsModule],
  providers: [
    WebhookSender,
    WebhooksService,
    WebhooksProcessor,
    {
      provide: WebhookQueue,
      inject: [WebhookSender, JsonLogger, { token: getQueueToken(WEBHOOKS_QUEUE), optional: true }],
      useFactory: (sender: WebhookSender, logger: JsonLogger, queue?: Queue<WebhookJob>) =>
        queue ? new BullWebhookQueue(queue, sender) : new InProcessWebhookQueue(sender, logger),
    },
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {
  /** With Redis, the webhooks queue (BullMQ's connection comes from the builds' transport). */
  static transport(config: AppConfig): DynamicModule[] {
    if (!config.redisUrl) return [];
    return [{ ...BullModule.registerQueue({ name: WEBHOOKS_QUEUE }), global: true }];
  }
}
