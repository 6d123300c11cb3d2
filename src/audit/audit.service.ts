import { Injectable } from '@nestjs/common';
import type { AuditEvent } from '@/database/tables/audit-events.entity';
import { AuditEventFilter, AuditEventsRepository } from '@/database/tables/audit-events.repository';
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

export type AuditFilter = AuditEventFilter;

/**
 * The append-only audit log. Writes are awaited inside the action they record, so an action that answered
 * success has its row; the request id and client address come from the request being served.
 */
@Injectable()
export class AuditService {
  constructor(private readonly events: AuditEventsRepository) {}

  async record(entry: AuditEntry): Promise<void> {
    const request = currentRequest();
    // Cut to the columns' lengths: a long name in a failed login must not fail the audit write.
    await this.events.append({
      action: entry.action,
      actor: entry.actor?.slice(0, 255) ?? null,
      target: entry.target?.slice(0, 255) ?? null,
      outcome: entry.outcome ?? 'success',
      clientAddress: request?.address ?? null,
      requestId: request?.requestId ?? null,
      details: entry.details ?? {},
    });
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
    const rows = await this.events.page({ ...filter, limit: filter.limit + 1 });
    return { events: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
  }
}
