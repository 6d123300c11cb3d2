import type { JsonLogger } from '@/runtime/json-logger';

const QUIET_MS = 30_000;

/**
 * A listener for the connection errors of a BullMQ queue, its events or its worker: one JSON warning per
 * distinct message every 30 s (a client retrying an unreachable Redis fails every few seconds).
 * BullMQ itself reconnects; readiness reports the outage.
 */
export function redisErrorLogger(logger: JsonLogger, client: string): (error: Error) => void {
  const lastLogged = new Map<string, number>();
  return (error: Error) => {
    const message = error?.message ?? String(error);
    const now = Date.now();
    if (now - (lastLogged.get(message) ?? 0) < QUIET_MS) return;
    lastLogged.set(message, now);
    logger.emit('warn', 'redis connection error', { client, error: message });
  };
}
