import { Injectable } from '@nestjs/common';
import type { AuditEvent } from '@/database/tables/audit-events.entity';
import { AuditEventFilter, AuditEventsRepository } from '@/database/tables/audit-events.repository';
import type { Caller } from '@/core/caller';
import { currentRequest } from '@/http/request/request-context';
import { storableCopy } from '@/http/input/input-limits';
import { DomainError } from '@/core/errors';
import { Transactions } from '@/database/tables/transactions';
import { JsonLogger } from '@/http/request/json-logger';

export interface AuditEntry {
  action: string;
  /** The acting user's name, or null when nobody is known. */
  actor: string | null;
  target?: string | null;
  outcome?: 'success' | 'failure';
  details?: Record<string, unknown>;
}

export type AuditFilter = AuditEventFilter;

/** What the audit row of an action that succeeded says, from the action's result. */
export interface AuditOfResult {
  target: string | null;
  details?: Record<string, unknown>;
}

/**
 * The append-only audit log. Writes are awaited inside the action they record, so an action that answered
 * success has its row; the request id and client address come from the request being served.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly events: AuditEventsRepository,
    private readonly transactions: Transactions,
    private readonly logger: JsonLogger,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    const request = currentRequest();
    // Cut to the columns' lengths and made storable: what a refused input held must not fail its audit row.
    await this.events.append({
      action: entry.action,
      actor: storableCopy(entry.actor?.slice(0, 255) ?? null),
      target: storableCopy(entry.target?.slice(0, 255) ?? null),
      outcome: entry.outcome ?? 'success',
      clientAddress: request?.address ?? null,
      requestId: request?.requestId ?? null,
      details: storableCopy(entry.details ?? {}),
    });
  }

  /**
   * Runs a caller's write and its audit row in one transaction: both commit or neither does. A refusal or a
   * failure is then audited as such (outcome `failure`, with its error code), so no attempt goes unrecorded.
   * `target` names what a refusal was about; `audit` says what the success row holds.
   */
  async act<T>(
    actor: string | null,
    action: string,
    target: string | null,
    work: () => Promise<T>,
    audit: (result: T) => AuditOfResult = () => ({ target }),
  ): Promise<T> {
    try {
      return await this.transactions.run(async () => {
        const result = await work();
        const row = audit(result);
        await this.record({ action, actor, target: row.target, details: row.details });
        return result;
      });
    } catch (error) {
      const code = error instanceof DomainError ? error.code : 'internal_error';
      await this.record({
        action,
        actor,
        target,
        outcome: 'failure',
        details: { error: code },
      }).catch((auditError: unknown) =>
        // The database is what failed (the action's own error says so to the caller); the log keeps it.
        this.logger.emit('error', 'audit row not written', {
          action,
          error: auditError instanceof Error ? auditError.message : String(auditError),
        }),
      );
      throw error;
    }
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
