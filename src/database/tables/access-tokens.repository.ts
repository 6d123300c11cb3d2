import { Injectable } from '@nestjs/common';
import { tableOf } from '@/database/transactions/transactions';
import { DataSource, IsNull, LessThan, Not, Repository } from 'typeorm';
import { AccessToken } from '@/database/tables/access-tokens.entity';
import { TokenLookup, TokenRecord } from '@/database/token-records/token-lookup';
import { announceInTransaction } from '@/database/token-records/token-changes';

/** The nil UUID: never a token's id (they are random, version 4). */
const NO_TOKEN = '00000000-0000-0000-0000-000000000000';

/** Records of expired tokens are kept this long, then pruned. */
const KEEP_EXPIRED_MS = 24 * 60 * 60_000;

/**
 * The `access_tokens` table. A token is valid only while its row exists, so revocation and user deletion
 * (which cascades here) take effect at once on every server process.
 */
@Injectable()
export class AccessTokensRepository {
  /** Inside a transaction when one is open (Transactions). */
  private get tokens(): Repository<AccessToken> {
    return tableOf(this.dataSource, AccessToken);
  }

  private readonly lookup: TokenLookup;

  constructor(private readonly dataSource: DataSource) {
    this.lookup = new TokenLookup(dataSource);
  }

  async insert(token: AccessToken): Promise<void> {
    await this.tokens.insert(token);
  }

  /**
   * The unexpired token of that id with its user, read from Postgres on every call (batched per turn of
   * the event loop, see TokenLookup); undefined when revoked, expired or its user deleted.
   */
  findActive(tokenId: string): Promise<TokenRecord | undefined> {
    return this.lookup.find(tokenId);
  }

  /**
   * Runs the lookup that every request with a token runs (same pool, same prepared statement) for a token
   * id nobody has, so that a readiness check fails whenever those requests would.
   */
  async checkLookup(): Promise<void> {
    await this.lookup.find(NO_TOKEN);
  }

  /** The user's named tokens that have not expired, oldest first. */
  listNamed(userId: string): Promise<AccessToken[]> {
    // `now()` of the database, not of this process, decides expiry, as in the lookup.
    return this.tokens
      .createQueryBuilder('t')
      .where('t.user_id = :userId', { userId })
      .andWhere('t.title IS NOT NULL')
      .andWhere('(t.expires_at IS NULL OR t.expires_at > now())')
      .orderBy('t.created_at', 'ASC')
      .getMany();
  }

  /** Deletes one of the user's named tokens; false when the user has no named token of that id. */
  async deleteNamed(userId: string, tokenId: string): Promise<boolean> {
    const result = await this.tokens.delete({ id: tokenId, userId, title: Not(IsNull()) });
    const deleted = (result.affected ?? 0) > 0;
    if (deleted) await announceInTransaction(this.tokens);
    return deleted;
  }

  /** Deletes one token's record, whatever its kind. */
  async deleteById(tokenId: string): Promise<void> {
    const result = await this.tokens.delete({ id: tokenId });
    if ((result.affected ?? 0) > 0) await announceInTransaction(this.tokens);
  }

  /** Drops records of tokens that expired more than a day ago. */
  async pruneExpired(): Promise<void> {
    await this.tokens.delete({ expiresAt: LessThan(new Date(Date.now() - KEEP_EXPIRED_MS)) });
  }
}

export type { TokenRecord };
