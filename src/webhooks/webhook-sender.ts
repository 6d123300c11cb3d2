import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Counter } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import { JsonLogger } from '@/runtime/json-logger';
import { MetricsService } from '@/metrics/metrics.service';
import { buildEvent, buildEventType } from '@/webhooks/build-event';

/** What one attempt came to. */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

// What of an endpoint's answer is kept for the history: its status, and the start of an error.
const ERROR_CHARS = 300;

/**
 * Delivers build events to the deployment's webhooks (WEBHOOK_URLS): one row per event and endpoint in
 * `webhook_deliveries`, each attempt a POST of the event signed as Standard Webhooks say (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 of id, timestamp and body with WEBHOOK_SECRET), by
 * their reference library. The queues decide when to try again.
 */
@Injectable()
export class WebhookSender {
  private readonly signer?: Webhook;
  private readonly attempts: Counter<'outcome'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly runs: BuildRunsRepository,
    private readonly logger: JsonLogger,
    metrics: MetricsService,
  ) {
    if (config.webhooks.secret) this.signer = new Webhook(config.webhooks.secret);
    this.attempts = new Counter({
      name: 'drey_webhook_attempts_total',
      help: 'Attempts to deliver build events to webhooks, by outcome (delivered, retry, failed)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  get enabled(): boolean {
    return this.config.webhooks.urls.length > 0;
  }

  get maxAttempts(): number {
    return this.config.webhooks.maxAttempts;
  }

  /** The wait before attempt `next` (2 for the first retry): the base, doubled each time. */
  delayBefore(next: number): number {
    return this.config.webhooks.retryBaseMs * 2 ** Math.max(0, next - 2);
  }

  /** Records a delivery of `buildId`'s event to every endpoint; their ids, for the queue. */
  async record(buildId: string): Promise<string[]> {
    const run = await this.runs.findById(buildId);
    if (!run || !this.enabled) return [];
    const eventId = randomUUID();
    const rows = this.config.webhooks.urls.map((url, index) => ({
      id: randomUUID(),
      eventId,
      eventType: buildEventType(run),
      buildId,
      endpoint: index + 1,
      origin: new URL(url).origin,
    }));
    await this.deliveries.insert(rows);
    return rows.map((row) => row.id);
  }

  /**
   * Attempt `attempt` (1 for the first) of one delivery: `retry` when it failed and attempts remain, and
   * `failed` when none do. Never throws for the endpoint's faults.
   */
  async attempt(deliveryId: string, attempt: number): Promise<AttemptOutcome> {
    const delivery = await this.deliveries.findById(deliveryId);
    const run = delivery && (await this.runs.findById(delivery.buildId));
    const url = delivery && this.config.webhooks.urls[delivery.endpoint - 1];
    if (!delivery || !run || !url || !this.signer || delivery.status !== 'pending') {
      // Configured otherwise since (an endpoint removed), or already settled by an earlier attempt.
      return 'failed';
    }
    const body = JSON.stringify(buildEvent(run));
    const sent = new Date();
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'Drey-Webhooks',
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(Math.floor(sent.getTime() / 1000)),
      'webhook-signature': this.signer.sign(delivery.eventId, sent, body),
    };
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // No redirects: a webhook answers where it was configured, or not at all.
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.webhooks.timeoutMs),
      });
      statusCode = response.status;
      // The answer's body is not read: an endpoint cannot make the sender hold what it sends.
      await response.body?.cancel().catch(() => undefined);
      if (statusCode < 200 || statusCode > 299) error = `answered ${statusCode}`;
    } catch (failure) {
      error = describe(failure, this.config.webhooks.timeoutMs);
    }
    const outcome: AttemptOutcome =
      error === null ? 'delivered' : attempt >= this.maxAttempts ? 'failed' : 'retry';
    await this.deliveries.recordAttempt(deliveryId, {
      status: outcome === 'retry' ? 'pending' : outcome,
      statusCode,
      error,
    });
    this.attempts.inc({ outcome });
    const fields = {
      buildId: delivery.buildId,
      event: delivery.eventType,
      eventId: delivery.eventId,
      endpoint: delivery.endpoint,
      origin: delivery.origin,
      attempt,
    };
    if (outcome === 'delivered') this.logger.emit('info', 'webhook delivered', fields);
    else if (outcome === 'retry') {
      this.logger.emit('warn', 'webhook attempt failed, will retry', {
        ...fields,
        error,
        retryInMs: this.delayBefore(attempt + 1),
      });
    } else this.logger.emit('error', 'webhook delivery failed', { ...fields, error });
    return outcome;
  }
}

function describe(failure: unknown, timeoutMs: number): string {
  const error = failure as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = error.cause?.code ?? error.cause?.message ?? error.message ?? String(failure);
  return cause.slice(0, ERROR_CHARS);
}
