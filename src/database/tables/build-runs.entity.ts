import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type BuildStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/**
 * What started a build: `POST P/build` (`request`), the build schedule, the first start of a service with
 * no build, or the operator (SIGHUP, `drey dev`, a build found lacking tables at start).
 */
export type BuildTrigger = 'request' | 'schedule' | 'start' | 'operator';

/**
 * Whose fault a failed build is: the project's (its SQL, its files: fixing the project fixes it, and
 * `POST P/build` answers 400 `invalid_project`), the infrastructure's (a database, a source or a disk the
 * build needed: 500 `build_failed`), or nobody's, the process having stopped (503 `build_interrupted`).
 */
export type BuildFault = 'project' | 'infrastructure' | 'interrupted';

/** Per-model figures of one build. */
export interface ModelBuildFigures {
  model: string;
  kind: string;
  durationMs: number;
  rows: number;
}

/** Where a build is: models done out of all, the one being built, and the one that failed, if any. */
export interface BuildRunProgress {
  done: number;
  total: number;
  current: { model: string; kind: string } | null;
  failedModel: string | null;
}

/** One build of the virtual data environment: its history lives in Postgres, not in Redis alone. */
@Entity({ name: 'build_runs' })
export class BuildRun {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: BuildStatus;

  @Column({ name: 'requested_by', type: 'varchar', length: 255, nullable: true })
  requestedBy!: string | null;

  @Index('IDX_build_runs_queued_at')
  @CreateDateColumn({ name: 'queued_at', type: 'timestamptz' })
  queuedAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ type: 'jsonb' })
  models!: ModelBuildFigures[];

  /** While it runs, and after it failed; null before it starts (and for builds older than the column). */
  @Column({ type: 'jsonb', nullable: true })
  progress!: BuildRunProgress | null;

  /**
   * The project it builds, `expenses v1` (see `projectIdentity`): projects sharing one Postgres keep their
   * histories, and their unfinished builds, apart. Null for builds older than the column.
   */
  @Column({ type: 'varchar', length: 100, nullable: true })
  project!: string | null;

  /** What started it; null for builds older than the column. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  trigger!: BuildTrigger | null;

  /** Whose fault it was, once it failed; null otherwise (and for builds older than the column). */
  @Column({ type: 'varchar', length: 16, nullable: true })
  fault!: BuildFault | null;

  /** The environment file the build produced, once it succeeded. */
  @Column({ name: 'environment_file', type: 'varchar', length: 255, nullable: true })
  environmentFile!: string | null;
}
