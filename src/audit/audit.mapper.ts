import type { AuditEvent } from '@/database/tables/audit-events.entity';
import { formatTimestamp } from '@/core/timestamps';

export function toAuditJson(event: AuditEvent): Record<string, unknown> {
  return {
    id: Number(event.id),
    at: formatTimestamp(event.at),
    actor: event.actor,
    action: event.action,
    target: event.target,
    outcome: event.outcome,
    client_address: event.clientAddress,
    request_id: event.requestId,
    details: event.details,
  };
}
