import type { BuildRun } from '@/database/tables/build-runs.entity';
import { formatTimestamp } from '@/common/timestamps';

export function toBuildJson(run: BuildRun): Record<string, unknown> {
  const time = (date: Date | null) => (date ? formatTimestamp(date, 'current') : null);
  return {
    id: run.id,
    status: run.status,
    requested_by: run.requestedBy,
    queued_at: time(run.queuedAt),
    started_at: time(run.startedAt),
    finished_at: time(run.finishedAt),
    duration_ms:
      run.startedAt && run.finishedAt ? run.finishedAt.getTime() - run.startedAt.getTime() : null,
    error: run.error,
    models: run.models.map((model) => ({
      model: model.model,
      kind: model.kind,
      rows: model.rows,
      duration_ms: model.durationMs,
    })),
  };
}
