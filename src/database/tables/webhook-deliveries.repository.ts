import { Injectable } from '@nestjs/common';
import { DataSource, In, Repository } from 'typeorm';
import { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';

/** The `webhook_deliveries` table: each build event's delivery to each webhook, as it goes. */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly deliveries: Repository<WebhookDelivery>;

  constructor(dataSource: DataSource) {
    this.deliveries = dataSource.getRepository(WebhookDelivery);
  }

  async insert(
    rows: Pick<
      WebhookDelivery,
      'id' | 'eventId' | 'eventType' | 'buildId' | 'endpoint' | 'origin'
    >[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.deliveries.insert(rows.map((row) => ({ ...row, status: 'pending', attempts: 0 })));
  }

  findById(id: string): Promise<WebhookDelivery | null> {
    return this.deliveries.findOneBy({ id });
  }

  /** Records one attempt: its outcome, and the delivery's status after it. */
  async recordAttempt(
    id: string,
    attempt: {
      status: WebhookDelivery['status'];
      statusCode: number | null;
      error: string | null;
    },
  ): Promise<void> {
    await this.deliveries.update(
      { id },
      {
        status: attempt.status,
        attempts: () => 'attempts + 1',
        lastAttemptAt: new Date(),
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
      },
    );
  }

  /** The deliveries of these builds, by build, in endpoint order. */
  async forBuilds(buildIds: string[]): Promise<Map<string, WebhookDelivery[]>> {
    const byBuild = new Map<string, WebhookDelivery[]>();
    if (buildIds.length === 0) return byBuild;
    const rows = await this.deliveries.find({
      where: { buildId: In(buildIds) },
      order: { endpoint: 'ASC', createdAt: 'ASC' },
    });
    for (const row of rows) {
      const list = byBuild.get(row.buildId) ?? [];
      list.push(row);
      byBuild.set(row.buildId, list);
    }
    return byBuild;
  }
}
