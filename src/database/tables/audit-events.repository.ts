import { Injectable } from '@nestjs/common';
import { tableOf } from '@/database/tables/transactions';
import { DataSource, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AuditEvent } from '@/database/tables/audit-events.entity';

/** A row to append; `id` and `at` come from the database. */
export type NewAuditEvent = Omit<AuditEvent, 'id' | 'at'>;

/** Which events to read, newest first. */
export interface AuditEventFilter {
  actor?: string;
  action?: string;
  outcome?: 'success' | 'failure';
  since?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

/** The append-only `audit_events` table: rows are added and read, never changed. */
@Injectable()
export class AuditEventsRepository {
  /** Inside a transaction when one is open (Transactions). */
  private get events(): Repository<AuditEvent> {
    return tableOf(this.dataSource, AuditEvent);
  }

  constructor(private readonly dataSource: DataSource) {}

  async append(event: NewAuditEvent): Promise<void> {
    // insert(), not save() (which wraps one statement in a transaction). Its types refuse an open JSON
    // object for a jsonb column, which TypeORM stores as JSON all the same.
    await this.events.insert(event as unknown as QueryDeepPartialEntity<AuditEvent>);
  }

  /**
   * Many rows in one INSERT, in their order (ids ascend with it), outside any open transaction: the rows
   * of many callers' reads, written after they were answered (AuditService.recordAfter).
   */
  async appendMany(events: NewAuditEvent[]): Promise<void> {
    await this.dataSource.manager
      .getRepository(AuditEvent)
      .insert(events as unknown as QueryDeepPartialEntity<AuditEvent>[]);
  }

  /** Newest first (ties by id), filtered, one page. */
  page(filter: AuditEventFilter): Promise<AuditEvent[]> {
    const query = this.events
      .createQueryBuilder('e')
      .orderBy('e.at', 'DESC')
      .addOrderBy('e.id', 'DESC');
    if (filter.actor !== undefined) query.andWhere('e.actor = :actor', { actor: filter.actor });
    if (filter.action !== undefined)
      query.andWhere('e.action = :action', { action: filter.action });
    if (filter.outcome !== undefined)
      query.andWhere('e.outcome = :outcome', { outcome: filter.outcome });
    if (filter.since !== undefined) query.andWhere('e.at >= :since', { since: filter.since });
    if (filter.until !== undefined) query.andWhere('e.at < :until', { until: filter.until });
    return query.offset(filter.offset).limit(filter.limit).getMany();
  }
}
