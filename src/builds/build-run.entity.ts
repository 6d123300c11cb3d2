// The entity lives with the other tables in src/database/tables; this path stays until the builds service
// moves to BuildRunsRepository.
export { BuildRun } from '@/database/tables/build-runs.entity';
export type { BuildStatus, ModelBuildFigures } from '@/database/tables/build-runs.entity';
