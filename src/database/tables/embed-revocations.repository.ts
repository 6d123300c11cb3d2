import { Injectable } from '@nestjs/common';
import { DataSource, LessThan, Repository } from 'typeorm';
import { EmbedRevocation } from '@/database/tables/embed-revocations.entity';
import { tableOf } from '@/database/transactions/transactions';

/** The `embed_revocations` table: embedding tokens that no longer open anything. */
@Injectable()
export class EmbedRevocationsRepository {
  /** The table, in the transaction being run (Transactions.run) when there is one. */
  private get revocations(): Repository<EmbedRevocation> {
    return tableOf(this.dataSource, EmbedRevocation);
  }

  constructor(private readonly dataSource: DataSource) {}

  /** Read on every request of an embedding that names an id, so a revocation holds at once everywhere. */
  async isRevoked(tokenId: string): Promise<boolean> {
    return (await this.revocations.countBy({ tokenId })) > 0;
  }

  /** Revokes `tokenId` until `expiresAt`; revoking it again changes nothing. */
  async revoke(tokenId: string, revokedBy: string | null, expiresAt: Date): Promise<void> {
    await this.revocations
      .createQueryBuilder()
      .insert()
      .values({ tokenId, revokedBy, expiresAt })
      .orIgnore()
      .execute();
  }

  /** Forgets revocations of tokens that have expired anyway. */
  async prune(now = new Date()): Promise<void> {
    await this.revocations.delete({ expiresAt: LessThan(now) });
  }
}
