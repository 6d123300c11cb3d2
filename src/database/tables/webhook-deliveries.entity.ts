import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * One build event to one of the deployment's webhooks: pending while attempts remain, then delivered or
 * failed. The endpoint is named by its place in WEBHOOK_URLS and its origin only: a webhook's path often
 * holds its own secret, and the history is read by every administrator.
 */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDelivery {
  @PrimaryColumn('uuid')
  id!: string;

  /** The event's id, sent as `webhook-id`: the same for every endpoint and every attempt. */
  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType!: string;

  @Index('IDX_webhook_deliveries_build')
  @Column({ name: 'build_id', type: 'uuid' })
  buildId!: string;

  /** 1 for the first URL of WEBHOOK_URLS. */
  @Column({ type: 'integer' })
  endpoint!: number;

  @Column({ type: 'varchar', length: 255 })
  origin!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt!: Date | null;

  /** The HTTP status of the last answer; null when there was none (refused, timed out). */
  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode!: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;
}
