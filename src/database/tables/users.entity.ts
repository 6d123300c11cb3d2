import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { UserFieldValue } from '@/core/user-fields';

/**
 * A user of the project. `id` changes when a user is deleted and created again, so tokens of the old user
 * (which reference the id) never come back to life.
 */
@Entity({ name: 'users' })
export class User {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Index('UQ_users_username', { unique: true })
  @Column({ type: 'varchar', length: 255 })
  username!: string;

  @Column({ name: 'is_admin', type: 'boolean', default: false })
  isAdmin!: boolean;

  /** argon2id hash; null for users who arrive through single sign-on and cannot use the login form. */
  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash!: string | null;

  /** The project's user fields, by name. */
  @Column({ type: 'jsonb' })
  fields!: Record<string, UserFieldValue>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
