import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * What the authorization server keeps (src/oauth): one row per record of oidc-provider's models (sessions,
 * interactions, grants, authorization codes, access and refresh tokens, registered clients), its payload as
 * the library gives it, with the fields it looks records up by beside it. Every replica reads the same rows,
 * so any of them answers any step of a sign-in.
 */
@Entity({ name: 'oauth_records' })
@Index('IDX_oauth_records_grant', ['grantId'])
@Index('IDX_oauth_records_uid', ['uid'])
@Index('IDX_oauth_records_account', ['model', 'accountId'])
@Index('IDX_oauth_records_expires_at', ['expiresAt'])
export class OAuthRecord {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  model!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  id!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @Column({ name: 'grant_id', type: 'varchar', length: 255, nullable: true })
  grantId!: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  uid!: string | null;

  @Column({ name: 'user_code', type: 'varchar', length: 255, nullable: true })
  userCode!: string | null;

  @Column({ name: 'account_id', type: 'varchar', length: 255, nullable: true })
  accountId!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt!: Date | null;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
