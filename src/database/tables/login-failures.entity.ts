import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A failed login, counted per username and per client address within a window, across processes. */
@Entity({ name: 'login_failures' })
@Index('IDX_login_failures_key_at', ['key', 'failedAt'])
export class LoginFailure {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  /** `user:<name>` or `addr:<address>`. */
  @Column({ type: 'varchar', length: 300 })
  key!: string;

  @Column({ name: 'failed_at', type: 'timestamptz', default: () => 'now()' })
  failedAt!: Date;
}
