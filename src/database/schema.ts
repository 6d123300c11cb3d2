import { BuildRun } from '@/builds/build-run.entity';
import { BuildRuns1763800000000 } from '@/database/migrations/1763800000000-build-runs';

/** Every entity and every migration, in order. A test fails when the two disagree. */
export const ENTITIES = [BuildRun];
export const MIGRATIONS = [BuildRuns1763800000000];
