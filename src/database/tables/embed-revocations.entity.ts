import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An embedding token revoked before it expires, by its `jti`: kept until the token would have expired
 * (embedding tokens are short-lived, EMBED_TOKEN_MAX_MINUTES at most), then pruned.
 */
@Entity({ name: 'embed_revocations' })
export class EmbedRevocation {
  @PrimaryColumn({ name: 'token_id', type: 'varchar', length: 128 })
  tokenId!: string;

  @Column({ name: 'revoked_at', type: 'timestamptz', default: () => 'now()' })
  revokedAt!: Date;

  @Column({ name: 'revoked_by', type: 'varchar', length: 255, nullable: true })
  revokedBy!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}
