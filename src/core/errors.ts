/**
 * Domain errors: services throw these, never HTTP exceptions, so the build worker and the CLI reuse the
 * services unchanged. Each carries a stable snake_case code; the layout filters turn it into a response.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'authentication_required'
  | 'invalid_token'
  | 'invalid_credentials'
  | 'forbidden'
  | 'not_found'
  | 'invalid_password'
  | 'invalid_user'
  | 'user_not_found'
  | 'invalid_user_operation'
  | 'invalid_parameter_selection'
  | 'unknown_parameter'
  | 'build_in_progress'
  | 'build_failed'
  | 'invalid_project'
  | 'build_interrupted'
  | 'invalid_sql'
  | 'query_timeout'
  | 'query_too_large'
  | 'model_failed'
  | 'not_ready'
  | 'renderer_unavailable'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'not_acceptable'
  | 'method_not_allowed'
  | 'internal_error';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unsupported_grant_type: 400,
  authentication_required: 401,
  invalid_token: 401,
  invalid_credentials: 401,
  forbidden: 403,
  not_found: 404,
  invalid_password: 400,
  invalid_user: 400,
  user_not_found: 400,
  invalid_user_operation: 400,
  invalid_parameter_selection: 400,
  unknown_parameter: 400,
  build_in_progress: 400,
  build_failed: 500,
  invalid_project: 400,
  build_interrupted: 503,
  invalid_sql: 400,
  query_timeout: 400,
  query_too_large: 400,
  model_failed: 500,
  not_ready: 503,
  renderer_unavailable: 503,
  rate_limited: 429,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_acceptable: 406,
  method_not_allowed: 405,
  internal_error: 500,
};

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds a client should wait before retrying (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends DomainError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

/**
 * A result asked for whole (every row in one response) has more rows than one response may hold. It carries
 * the figures so that each layout words the advice its clients can follow (the legacy layout's:
 * `legacy/datasets.ts`); the message here names the figures only.
 */
export class ResultTooLargeError extends DomainError {
  constructor(
    readonly total: number,
    readonly max: number,
  ) {
    super(
      'invalid_request',
      `The result has ${total} rows, more than one response may hold (MAX_RESULT_ROWS, ${max})`,
    );
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'You do not have access to this resource') {
    super('forbidden', message);
  }
}

export class AuthenticationRequiredError extends DomainError {
  constructor(message = 'Authentication is required: send Authorization: Bearer <token>') {
    super('authentication_required', message);
  }
}

export class InvalidTokenError extends DomainError {
  constructor(message = 'The access token is invalid, expired or revoked') {
    super('invalid_token', message);
  }
}

export class NotReadyError extends DomainError {
  /** `retryAfterSeconds` null: no Retry-After, when waiting will not help (a failed build). */
  constructor(message: string, retryAfterSeconds: number | null = 5) {
    super('not_ready', message, retryAfterSeconds ?? undefined);
  }
}

/** An `Accept` or `x_format` the endpoint cannot serve: the message lists what it can. */
export class NotAcceptableError extends DomainError {
  constructor(message: string) {
    super('not_acceptable', message);
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

/**
 * A model of the project failed when a request ran it (its SQL planned at build time, so a failure of the
 * data or of an external database). The engine's message is for administrators and the log; others are
 * told that a model failed, with the request id to quote.
 */
export class ModelFailedError extends DomainError {
  constructor(
    readonly model: string,
    readonly engineMessage: string,
  ) {
    super('model_failed', `Model "${model}" failed: ${engineMessage}`);
  }
}
