import { ResultTooLargeError } from '@/core/errors';
import { wholeResultTooLarge } from '@/legacy/datasets';

/** What the legacy body reads of an error's description (http/errors/error-mapping.ts's ErrorReply). */
export interface LegacyErrorInput {
  status: number;
  message: string;
  retryAfterSeconds?: number;
}

/**
 * Legacy layout: `{detail}`; a 400 also carries `message` with the same text, which clients of the 0.4
 * service read on client errors; `retry_after` as in the current layout. `error` is what was thrown, for the
 * errors this layout words itself.
 */
export function renderLegacy(reply: LegacyErrorInput, error: unknown): object {
  const text =
    error instanceof ResultTooLargeError
      ? wholeResultTooLarge(error.total, error.max)
      : reply.message;
  const retry =
    reply.retryAfterSeconds === undefined ? {} : { retry_after: reply.retryAfterSeconds };
  return reply.status === 400
    ? { detail: text, message: text, ...retry }
    : { detail: text, ...retry };
}
