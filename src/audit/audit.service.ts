import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { AuditEvent } from '@/audit/audit-event.entity';
import type { Caller } from '@/core/caller';
import { currentRequest } from '@/common/request-context';

export interface AuditEntry {
  action: string;
  /** The acting user's name, or null when nobody is known. */
  actor: string | null;
  target?: string | null;
  outcome?: 'success' | 'failure';
  details?: Record<string, unknown>;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  outcome?: 'success' | 'failure';
  since?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

/**
 * The append-only audit log. Writes are awaited inside the action they record, so an action that answered
 * success has its row; the request id and client address come from the request being served.
 */
@Injectable()
export class AuditService {
  private readonly events: Repository<AuditEvent>;

  constructor(private readonly dataSource: DataSource) {
    this.events = dataSource.getRepository(AuditEvent);
  }

  async record(entry: AuditEntry): Promise<void> {
    const request = currentRequest();
    // Raw SQL: TypeORM's insert types do not accept an open JSON object for a jsonb column.
    await this.dataSource.query(
      `INSERT INTO audit_events (action, actor, target, outcome, client_address, request_id, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        entry.action,
        entry.actor?.slice(0, 255) ?? null,
        entry.target?.slice(0, 255) ?? null,
        entry.outcome ?? 'success',
        request?.address ?? null,
        request?.requestId ?? null,
        JSON.stringify(entry.details ?? {}),
      ],
    );
  }

  /** Shorthand for an action of a signed-in caller. */
  recordBy(
    caller: Caller,
    action: string,
    target: string | null,
    details: Record<string, unknown> = {},
  ) {
    return this.record({ action, actor: caller.username, target, details });
  }

  /** Newest first, with filters; one more row than asked tells whether a next page exists. */
  async list(filter: AuditFilter): Promise<{ events: AuditEvent[]; hasMore: boolean }> {
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
    const rows = await query
      .offset(filter.offset)
      .limit(filter.limit + 1)
      .getMany();
    return { events: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
  }
}
