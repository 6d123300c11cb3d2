import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import type { AuditEvent } from '@/database/tables/audit-events.entity';
import {
  AuditEventFilter,
  AuditEventsRepository,
  NewAuditEvent,
} from '@/database/tables/audit-events.repository';
import { auditActor, type Caller } from '@/core/caller';
import { currentRequest } from '@/runtime/request-scope';
import { storableCopy } from '@/core/input-rules';
import { DomainError, NotReadyError } from '@/core/errors';
import { isUnavailable } from '@/runtime/outages';
import { Transactions } from '@/database/transactions/transactions';
import { JsonLogger } from '@/runtime/json-logger';
import { GroupCommit } from '@/audit/group-commit';

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

/** Rows per INSERT of {@link AuditService.recordAfter} (7 parameters a row, far below Postgres' 65535). */
const AFTER_BATCH = 500;
/** Rows waiting past which a read waits for its row to be written (a few MB at most). */
const AFTER_QUEUED = 10_000;

/**
 * The append-only audit log. Writes are awaited inside the action they record, so an action that answered
 * success has its row; the request id and client address come from the request being served. Reads that
 * are audited one by one (MCP tool calls) use {@link recordAfter} instead.
 */
@Injectable()
export class AuditService implements BeforeApplicationShutdown {
  /**
   * The rows of {@link recordAfter}, written together after their calls were answered: a call whose row
   * was one awaited INSERT cost the server more CPU and waited for a commit (see docs/performance.md,
   * "Figures behind the code", "Audit rows after the answer").
   */
  private readonly after = new GroupCommit<NewAuditEvent>({
    write: (rows) => this.events.appendMany(rows),
    failed: (rows, error) =>
      // Not retried: the log keeps what the rows said, so no audited call goes unrecorded silently.
      this.logger.emit('error', 'audit rows not written', {
        error: error instanceof Error ? error.message : String(error),
        rows,
      }),
    maxBatch: AFTER_BATCH,
    maxQueued: AFTER_QUEUED,
  });

  constructor(
    private readonly events: AuditEventsRepository,
    private readonly transactions: Transactions,
    private readonly logger: JsonLogger,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.events.append(rowOf(entry));
  }

  /**
   * For a read answered before its row is written (an MCP tool call). Guaranteed: the row is taken, with
   * the request's id and address, before the caller answers; rows are written in order, the rows taken
   * during one event-loop turn or during the previous INSERT in one INSERT; every row taken is written
   * before the database closes on a normal shutdown (beforeApplicationShutdown runs once the HTTP server
   * has drained) and before this replica lists the log ({@link list}); an INSERT that fails is logged at
   * error level with its rows. Not guaranteed: rows taken and not yet written when the process is killed
   * or crashes (at most the last event-loop turns' and the INSERT in flight). Past {@link AFTER_QUEUED}
   * waiting rows the caller waits for them to be written, so a slow database slows the reads down rather
   * than filling the memory.
   */
  recordAfter(entry: AuditEntry): Promise<void> {
    return this.after.add(rowOf(entry));
  }

  /** The rows taken by {@link recordAfter}, written before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.after.flush();
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
    } catch (thrown) {
      // A connection dropped mid-action (a restart, a failover, pg_terminate_backend): the transaction died
      // with it, so nothing was done (or, when only COMMIT's answer was lost, all of it with its row). Either
      // way the caller may try again: 503 with Retry-After, never a 500.
      const error = isUnavailable(thrown)
        ? new NotReadyError('The database dropped the connection; try again shortly')
        : thrown;
      const code = error instanceof DomainError ? error.code : 'internal_error';
      // On a connection of its own, outside any transaction still open around this one: that one's
      // connection may be the one that died (TypeORM then released its query runner), and it would roll
      // the refusal's row back with it.
      await this.transactions
        .outside(() =>
          this.record({ action, actor, target, outcome: 'failure', details: { error: code } }),
        )
        .catch((auditError: unknown) =>
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
    return this.record({ action, actor: auditActor(caller), target, details });
  }

  /** Newest first, with filters; one more row than asked tells whether a next page exists. */
  async list(filter: AuditFilter): Promise<{ events: AuditEvent[]; hasMore: boolean }> {
    // What this replica has answered is in the log it lists.
    await this.after.flush();
    const rows = await this.events.page({ ...filter, limit: filter.limit + 1 });
    return { events: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
  }
}

/** An entry as its row: cut to the columns' lengths and made storable, with the request's id and address. */
function rowOf(entry: AuditEntry): NewAuditEvent {
  const request = currentRequest();
  // What a refused input held must not fail its audit row.
  return {
    action: entry.action,
    actor: storableCopy(entry.actor?.slice(0, 255) ?? null),
    target: storableCopy(entry.target?.slice(0, 255) ?? null),
    outcome: entry.outcome ?? 'success',
    clientAddress: request?.address ?? null,
    requestId: request?.requestId ?? null,
    details: storableCopy(entry.details ?? {}),
  };
}
