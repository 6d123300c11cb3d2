/**
 * Whether an error means a neighbour (Postgres, Redis) is unreachable rather than that the request is
 * wrong: the database waits them out at start-up, an audited action turns them into a NotReadyError, and
 * the HTTP edge answers them 503 `not_ready` with Retry-After (`http/errors/error-mapping.ts`), so the
 * client simply tries again.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
// Postgres SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, crash).
const SQLSTATE = /^(08|57P0)/;
const MESSAGES = [
  // node-postgres: the socket closed under a query, or a client used after its connection died.
  /Connection terminated/i,
  /Client was closed and is not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i,
  /the database system is (starting up|shutting down)/i,
];

/**
 * TypeORM's errors for a connection it has given up: its Postgres query runner releases itself when its
 * connection emits an error (Postgres terminated the session: a restart, a failover, pg_terminate_backend),
 * so the next statement of a transaction that was open on it fails with these instead of a Postgres code.
 * Seen in the fault drill as a 500 for a token revocation during a Postgres restart.
 */
const RELEASED = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

interface MaybeConnectionError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: MaybeConnectionError;
  cause?: MaybeConnectionError;
}

export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const candidate = error as MaybeConnectionError;
  if (typeof candidate.name === 'string' && RELEASED.has(candidate.name)) return true;
  if (
    typeof candidate.code === 'string' &&
    (NETWORK_CODES.has(candidate.code) || SQLSTATE.test(candidate.code))
  ) {
    return true;
  }
  if (
    typeof candidate.message === 'string' &&
    MESSAGES.some((pattern) => pattern.test(candidate.message as string))
  ) {
    return true;
  }
  return (
    isUnavailable(candidate.driverError, depth + 1) || isUnavailable(candidate.cause, depth + 1)
  );
}

/**
 * Whether an error means the server's own disk is full (an export's file, a query's spill): the request is
 * right and the project too, so it is no 500 `model_failed` but a 503 to try again once space is freed
 * (exports being sent end and delete their files). Seen in the fault drill: an export during a full data
 * disk answered 500 with DuckDB's "Could not write file ...: No space left on device".
 */
export function isDiskFull(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { code?: unknown; message?: unknown; engineMessage?: unknown };
  if (candidate.code === 'ENOSPC' || candidate.code === 'EDQUOT') return true;
  return [candidate.engineMessage, candidate.message].some(
    (text) => typeof text === 'string' && /No space left on device|Disk quota exceeded/i.test(text),
  );
}
