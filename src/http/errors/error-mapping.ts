import { HttpException } from '@nestjs/common';
import { DomainError, ErrorCode, ModelFailedError, STATUS_OF } from '@/core/errors';
import { isDiskFull, isUnavailable } from '@/runtime/outages';
import { JSON_TOO_DEEP, MAX_JSON_DEPTH } from '@/http/input/json-depth';
import { FORM_LIMITS, isPostgresDataException } from '@/http/input/input-limits';

/**
 * What every error becomes before a layout renders it: the current layout here ({@link renderCurrent}), the
 * legacy one in `legacy/errors.ts`.
 */
export interface ErrorReply {
  status: number;
  code: ErrorCode;
  message: string;
  retryAfterSeconds?: number;
  /** True when the error was not foreseen: it is logged with its stack. */
  unexpected: boolean;
}

const HTTP_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'authentication_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/** Errors raised by Express' body parsers carry a status and a type. */
interface ParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

/**
 * What an error answers. `forAdmin`: the caller is an administrator, who is told what a failing model's
 * engine said (others get a sentence with nothing of the project's SQL or data in it).
 */
export function describeError(error: unknown, forAdmin = false): ErrorReply {
  // A failed build keeps its documented 500 `build_failed` (its history says why); a request is answered 503.
  const domain = error instanceof DomainError && !(error instanceof ModelFailedError);
  if (!domain && isDiskFull(error)) {
    return {
      status: 503,
      code: 'not_ready',
      message: 'The server has no disk space left for this request; try again shortly',
      retryAfterSeconds: 30,
      unexpected: false,
    };
  }
  if (error instanceof ModelFailedError && !forAdmin) {
    return {
      status: STATUS_OF[error.code],
      code: error.code,
      message:
        `A model this request runs failed ("${error.model}"). The administrators can see why in the ` +
        'log, under the X-Request-Id of this response.',
      unexpected: false,
    };
  }
  if (error instanceof DomainError) {
    return {
      status: STATUS_OF[error.code],
      code: error.code,
      message: error.message,
      retryAfterSeconds: error.retryAfterSeconds,
      unexpected: error.code === 'internal_error',
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = HTTP_CODES[status];
    if (code) return { status, code, message: httpMessage(error, status), unexpected: false };
    return internal();
  }
  if (isUnavailable(error)) {
    return {
      status: 503,
      code: 'not_ready',
      message: 'A service Drey depends on is unavailable; try again shortly',
      retryAfterSeconds: 5,
      unexpected: false,
    };
  }
  const parser = error as ParserError;
  // body-parser answers too many form fields with 413; decisions.md says 400, as for query keys.
  if (parser?.type === 'parameters.too.many') {
    return {
      status: 400,
      code: 'invalid_request',
      message: `The form has more than ${FORM_LIMITS.fields} fields`,
      unexpected: false,
    };
  }
  if (isPostgresDataException(error)) {
    return {
      status: 400,
      code: 'invalid_request',
      message:
        'A value of the request cannot be stored (a character or a length the database refuses)',
      unexpected: false,
    };
  }
  const parserStatus = parser?.status ?? parser?.statusCode;
  if (parser?.expose && typeof parserStatus === 'number' && HTTP_CODES[parserStatus]) {
    const code = HTTP_CODES[parserStatus];
    const message =
      parser.type === 'entity.parse.failed'
        ? 'The request body is not valid JSON'
        : parser.type === 'entity.too.large'
          ? 'The request body is too large'
          : parser.type === JSON_TOO_DEEP
            ? `The request body nests deeper than ${MAX_JSON_DEPTH} levels`
            : parser.type === 'charset.unsupported' || parser.type === 'encoding.unsupported'
              ? 'The request body is in a charset or encoding that is not accepted'
              : 'The request body could not be read';
    return { status: parserStatus, code, message, unexpected: false };
  }
  return internal();
}

function internal(): ErrorReply {
  return {
    status: 500,
    code: 'internal_error',
    message: 'Internal server error',
    unexpected: true,
  };
}

function httpMessage(error: HttpException, status: number): string {
  if (status === 404) return 'No such resource';
  if (status === 405) return 'This path does not take that method';
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : error.message;
}

/**
 * `retry_after`: the seconds of `Retry-After`, in the body too (a 429 or a 503 that waiting will cure), so a
 * client that shows the body tells its reader when to try again.
 */
function retryAfter(reply: ErrorReply): { retry_after?: number } {
  return reply.retryAfterSeconds === undefined ? {} : { retry_after: reply.retryAfterSeconds };
}

/** Current layout: `{statusCode, error, message}`, with `retry_after` when there is a Retry-After. */
export function renderCurrent(reply: ErrorReply): object {
  return {
    statusCode: reply.status,
    error: reply.code,
    message: reply.message,
    ...retryAfter(reply),
  };
}
