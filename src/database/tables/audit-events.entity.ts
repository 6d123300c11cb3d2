import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One line of the append-only audit log: who did what, when, from where, in which request. */
@Entity({ name: 'audit_events' })
@Index('IDX_audit_events_at', ['at'])
@Index('IDX_audit_events_actor_at', ['actor', 'at'])
@Index('IDX_audit_events_action_at', ['action', 'at'])
export class AuditEvent {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  /** The user who acted; null when unknown (a failed login of a name that does not exist is in details). */
  @Column({ type: 'varchar', length: 255, nullable: true })
  actor!: string | null;

  /** For example `login`, `token.create`, `user.delete`, `build`, `query_models`. */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** What the action was on: a user name, a token id, a build id. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  target!: string | null;

  @Column({ type: 'varchar', length: 16 })
  outcome!: 'success' | 'failure';

  @Column({ name: 'client_address', type: 'varchar', length: 64, nullable: true })
  clientAddress!: string | null;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ type: 'jsonb' })
  details!: Record<string, unknown>;
}
