import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';
import { User } from '@/database/tables/users.entity';

/**
 * Every issued token, temporary ones included: a token is valid only while its row exists, so revocation
 * and user deletion (which cascades here) take effect at once on every server process.
 */
@Entity({ name: 'access_tokens' })
export class AccessToken {
  /** The JWT's `jti`. */
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Index('IDX_access_tokens_user_id')
  @Column({ name: 'user_id', type: 'uuid' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_access_tokens_user' })
  user?: User;

  /** Null for login and temporary tokens, which are neither listed nor revocable. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  title!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Null for a named token that never expires. */
  @Index('IDX_access_tokens_expires_at')
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;
}
