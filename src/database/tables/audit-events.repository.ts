import { Injectable } from '@nestjs/common';
import { tableOf } from '@/database/transactions/transactions';
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
   * of many callers' reads, written after they were answered (AuditService.recordAfter). Plain SQL rather
   * than insert(): TypeORM's builder, with the RETURNING of id and at it adds, is a cost of its own on a
   * path taken by every read, where a batch holds one to a few rows (see docs/performance.md, "Figures
   * behind the code", "Audit rows in one INSERT").
   */
  async appendMany(events: NewAuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    const values: unknown[] = [];
    const rows = events.map((event) => {
      const at = values.length;
      values.push(
        event.actor,
        event.action,
        event.target,
        event.outcome,
        event.clientAddress,
        event.requestId,
        JSON.stringify(event.details),
      );
      return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7}::jsonb)`;
    });
    await this.dataSource.query(
      `INSERT INTO audit_events (actor, action, target, outcome, client_address, request_id, details) VALUES ${rows.join(', ')}`,
      values,
    );
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
