import type { BuildRun } from '@/database/tables/build-runs.entity';
import type { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';
import { formatTimestamp } from '@/core/timestamps';

const time = (date: Date | null) => (date ? formatTimestamp(date) : null);

/**
 * A build as the history shows it; with `notifications`, its events' deliveries to the deployment's
 * webhooks (the history lists them; the events themselves do not).
 */
export function toBuildJson(
  run: BuildRun,
  notifications?: WebhookDelivery[],
): Record<string, unknown> {
  return {
    id: run.id,
    status: run.status,
    trigger: run.trigger,
    requested_by: run.requestedBy,
    queued_at: time(run.queuedAt),
    started_at: time(run.startedAt),
    finished_at: time(run.finishedAt),
    duration_ms:
      run.startedAt && run.finishedAt ? run.finishedAt.getTime() - run.startedAt.getTime() : null,
    error: run.error,
    fault: run.status === 'failed' ? (run.fault ?? null) : null,
    progress: progressJson(run),
    models: run.models.map((model) => ({
      model: model.model,
      kind: model.kind,
      rows: model.rows,
      duration_ms: model.durationMs,
    })),
    ...(notifications && { notifications: notifications.map(toNotificationJson) }),
  };
}

function toNotificationJson(delivery: WebhookDelivery): Record<string, unknown> {
  return {
    event: delivery.eventType,
    event_id: delivery.eventId,
    endpoint: delivery.endpoint,
    origin: delivery.origin,
    status: delivery.status,
    attempts: delivery.attempts,
    last_attempt_at: time(delivery.lastAttemptAt),
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
  };
}

/**
 * Where a running build is (models done of all, the one being built, time since it started); for a failed
 * one, the model it failed on. Null for queued and succeeded builds.
 */
function progressJson(run: BuildRun): Record<string, unknown> | null {
  const progress = run.progress;
  if (run.status === 'running') {
    return {
      done: progress?.done ?? 0,
      total: progress?.total ?? null,
      current_model: progress?.current?.model ?? null,
      current_kind: progress?.current?.kind ?? null,
      elapsed_ms: run.startedAt ? Date.now() - run.startedAt.getTime() : null,
    };
  }
  if (run.status === 'failed' && progress) {
    return { done: progress.done, total: progress.total, failed_model: progress.failedModel };
  }
  return null;
}
