import type { Epochs } from '@/cache/redis-epoch';
import type { TokenRecord } from '@/database/token-records/token-lookup';
import type { TokenChanges } from '@/database/token-records/token-changes';

/**
 * How long a record is kept at most: the bound for a change made outside Drey (SQL by hand) or one that
 * could be announced neither through Redis nor through Postgres; Drey's own changes are seen at the next
 * request.
 */
export const KEPT_MS = 60_000;

/** Records kept at most (about 300 bytes each). */
const KEPT_MAX = 10_000;

interface Kept {
  record: TokenRecord;
  /** Milliseconds since the epoch: the token's expiry, or {@link KEPT_MS} after it was read. */
  until: number;
}

/**
 * The records of Drey's tokens, as every request with a token needs them (TokensService.callerOf). Postgres
 * stays the authority, and what its guarantee was stays: a request sent after a revocation, a user's
 * deletion or a change of their rights was answered is checked against the record as changed, on every
 * process. What changes is the price of a request whose record did not change: with Redis, each process keeps
 * the records it read, valid while a value in Redis, changed by every such write after it commits
 * ({@link changed}), stays the same. A process reads that value once per turn of the event loop (one
 * GET for every request of the turn, sent after they arrived), instead of one Postgres query per turn; a
 * different value empties what it keeps. A record read from Postgres is kept only if the value it was read
 * under is still current, so a write committed while it was read cannot be hidden. The GET costs the process
 * a fraction of the query's CPU (see docs/performance.md, "Figures behind the code", "Token records: a
 * Redis GET against a Postgres lookup").
 *
 * Without Redis nothing is kept (a command line writing to the same database could not say so): every turn
 * queries Postgres, as before. When Redis cannot be read, that turn does too. A change that could not be
 * written to Redis (unreachable from the process that made it, while the others may still read the old
 * value: a reconnection lagging behind theirs, a partition, a restart) is announced through Postgres
 * instead ({@link TokenChanges}), and every process forgets what it keeps when it hears it; a process keeps
 * records only while it listens there, so it cannot miss one. Framework-free (DatabaseModule provides it),
 * so that its rules are unit-tested.
 */
export class TokenRecords {
  /** The value {@link kept} belongs to; undefined: none read yet, nothing kept. */
  private epoch: string | null | undefined;
  private readonly kept = new Map<string, Kept>();

  /**
   * @param findActive Postgres' answer (AccessTokensRepository.findActive)
   * @param epochs null without Redis
   * @param unannounced told of a change {@link changed} could not announce through Redis, with what
   *   happened instead
   * @param changes the announcements through Postgres; null where no other process can serve from the
   *   same database (the embedded one) or nothing is kept (no Redis)
   */
  constructor(
    private readonly findActive: (tokenId: string) => Promise<TokenRecord | undefined>,
    private readonly epochs: Epochs | null,
    private readonly unannounced: (error: unknown, hint: string, level: 'warn' | 'error') => void,
    private readonly changes: TokenChanges | null = null,
  ) {
    changes?.subscribe(() => this.forget());
  }

  /** The unexpired token of that id with its user; undefined when revoked, expired or its user deleted. */
  async find(tokenId: string): Promise<TokenRecord | undefined> {
    if (!this.epochs) return this.findActive(tokenId);
    let epoch: string | null;
    try {
      epoch = await this.epochs.current();
    } catch {
      this.forget();
      return this.findActive(tokenId);
    }
    // Not listening for announcements made through Postgres: one could be missed, so nothing is kept.
    if (this.changes && !this.changes.listening) return this.findActive(tokenId);
    if (epoch !== this.epoch) {
      this.kept.clear();
      this.epoch = epoch;
    }
    const now = Date.now();
    const hit = this.kept.get(tokenId);
    if (hit && now < hit.until) return hit.record;
    const record = await this.findActive(tokenId);
    // Read after `epoch` was: it holds every change announced before. Kept only while that is still current
    // (an announcement through Postgres, or the listener lost, while it was read forgets `this.epoch`).
    if (record && this.epoch === epoch) {
      if (this.kept.size >= KEPT_MAX) this.kept.clear();
      const expires = record.expires_at?.getTime() ?? Infinity;
      this.kept.set(tokenId, { record, until: Math.min(expires, now + KEPT_MS) });
    }
    return record;
  }

  /**
   * Says that tokens or users changed (a token revoked, a user deleted, their rights or fields changed): call
   * once the change has committed, before answering. Should Redis refuse, the change is announced through
   * Postgres, and resolves once Postgres has it queued for every listening process; should that fail too,
   * the change still holds in Postgres and other processes see it within {@link KEPT_MS}; the log says so.
   */
  async changed(): Promise<void> {
    this.forget();
    if (!this.epochs) return;
    try {
      await this.epochs.advance();
      return;
    } catch (error) {
      if (!this.changes) {
        this.unannounced(error, `other processes apply it within ${KEPT_MS / 1000} s`, 'error');
        return;
      }
      try {
        await this.changes.announce();
        this.unannounced(error, 'announced through Postgres instead', 'warn');
      } catch (fallback) {
        this.unannounced(
          error,
          `nor through Postgres (${fallback instanceof Error ? fallback.message : String(fallback)}): other processes apply it within ${KEPT_MS / 1000} s`,
          'error',
        );
      }
    }
  }

  /** Stops listening for announcements (at shutdown). */
  async close(): Promise<void> {
    await this.changes?.close();
  }

  private forget(): void {
    this.kept.clear();
    this.epoch = undefined;
  }
}
