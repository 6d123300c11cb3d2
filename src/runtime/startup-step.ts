import type { JsonLogger } from '@/runtime/json-logger';

/**
 * One line per step of a start (the modules loaded, the database, its migrations, the build served, the
 * project checked), so that the seconds between `starting` and `listening` say what they are spent on:
 * `elapsedMs` counts from the process's start, which also makes the lines the start's profile by phase.
 */
export function startupStep(
  logger: JsonLogger,
  step: string,
  fields: Record<string, unknown> = {},
): void {
  logger.emit('info', `start-up: ${step}`, {
    ...fields,
    elapsedMs: Math.round(performance.now()),
  });
}
