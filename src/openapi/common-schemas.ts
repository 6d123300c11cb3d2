import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  ResponsesObject,
  SchemaObject,
} from '@nestjs/swagger';
import { STATUS_OF } from '@/core/errors';
import { DEFAULT_LIMIT, EXPORT_MEDIA_TYPES } from '@/core/result-builtins';

/**
 * Shared pieces of the OpenAPI document, free of decorators: schema references and the error bodies of
 * both layouts. A typed client generated from the document (test/typed-client) relies on every response
 * having its schema, errors included.
 */

export type Schemas = Record<string, SchemaObject>;

/** A reference to a schema of `components.schemas`. */
export function ref(name: string): ReferenceObject {
  return { $ref: `#/components/schemas/${name}` };
}

/** An object schema whose properties are all required. */
export function object(
  properties: Record<string, SchemaObject | ReferenceObject>,
  description?: string,
): SchemaObject {
  return { type: 'object', description, required: Object.keys(properties), properties };
}

/** The statuses an error can answer with (decisions.md, "Error bodies and status codes"). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 406 | 413 | 415 | 429 | 500 | 503;

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Invalid request: a value of the wrong type or shape, or a rule of the operation broken',
  401:
    'No token where one is needed (`authentication_required`), a token that is not valid ' +
    '(`invalid_token`), or wrong credentials; with `WWW-Authenticate: Bearer`',
  403: 'The caller may not do this (`forbidden`)',
  404: 'No such project, version, item or token (`not_found`)',
  406: 'An `Accept` or `x_format` the operation cannot serve (`not_acceptable`); the message lists what it can',
  413: 'The request body is too large (`payload_too_large`)',
  415:
    'The body is of a content type the operation does not take, or JSON in a charset other than UTF-8 ' +
    '(`unsupported_media_type`)',
  429:
    'Too many requests (`rate_limited`); `Retry-After`, and `retry_after` in the body, say when to try ' +
    'again',
  500: 'An unexpected failure, a failed build or a model that failed at request time',
  503:
    'Not ready: the data environment is not built yet, or a service Drey needs is unavailable; ' +
    'with `Retry-After`',
};

const RETRY_AFTER: SchemaObject = {
  type: 'integer',
  minimum: 1,
  description:
    'Seconds to wait before trying again, as `Retry-After` says; present when it is sent',
};

/** Error bodies: `{statusCode, error, message}` in the current layout, `{detail}` in the legacy one. */
export const ERROR_SCHEMAS: Schemas = {
  Error: {
    type: 'object',
    description: 'Every error of the current layout',
    required: ['statusCode', 'error', 'message'],
    properties: {
      statusCode: { type: 'integer', description: 'The HTTP status, repeated' },
      error: {
        type: 'string',
        enum: Object.keys(STATUS_OF),
        description: 'A stable snake_case code',
      },
      message: { type: 'string', description: 'A sentence a person can act on' },
      retry_after: RETRY_AFTER,
    },
  },
  LegacyError: {
    type: 'object',
    description: 'Every error of the legacy layout but a 400',
    required: ['detail'],
    properties: { detail: { type: 'string' }, retry_after: RETRY_AFTER },
  },
  LegacyClientError: {
    type: 'object',
    description:
      'A 400 of the legacy layout: `message` repeats `detail` for clients of the 0.4 service',
    required: ['detail', 'message'],
    properties: {
      detail: { type: 'string' },
      message: { type: 'string' },
      retry_after: RETRY_AFTER,
    },
  },
};

export type Layout = 'current' | 'legacy';

function errorSchema(layout: Layout, status: ErrorStatus): ReferenceObject {
  if (layout === 'current') return ref('Error');
  return ref(status === 400 ? 'LegacyClientError' : 'LegacyError');
}

export function errorResponse(layout: Layout, status: ErrorStatus): ResponseObject {
  return {
    description: ERROR_DESCRIPTIONS[status],
    content: { 'application/json': { schema: errorSchema(layout, status) } },
  };
}

/** The error responses of an operation, for paths that are written without decorators. */
export function errorResponses(layout: Layout, statuses: ErrorStatus[]): ResponsesObject {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(layout, status)]));
}

/**
 * What any route under a project path can answer: a query string or path that breaks the input limits (a
 * NUL, a lone surrogate, too many keys, a path that does not decode), an invalid token (on public routes
 * too), a project or version that is not the served one, an outage, an unexpected failure.
 */
export const COMMON_ERRORS: ErrorStatus[] = [400, 401, 404, 500, 503];
/**
 * What a route that takes a body can also answer; and any route of a method that may carry one (DELETE, a
 * POST without a body), since a body that is sent is bounded and typed all the same.
 */
export const BODY_ERRORS: ErrorStatus[] = [400, 413, 415];
function operationsOf(document: OpenAPIObject): OperationObject[] {
  return Object.values(document.paths).flatMap((item) =>
    [item.get, item.put, item.post, item.delete, item.patch].filter(
      (operation): operation is OperationObject => operation !== undefined,
    ),
  );
}

/** `x_limit`'s bounds and default under MAX_RESULT_ROWS (`parseResultOptions`). */
function limitBounds(maxRows: number): SchemaObject {
  return {
    minimum: 0,
    maximum: maxRows,
    default: Math.min(DEFAULT_LIMIT, maxRows),
    description: `Rows returned, up to ${maxRows} (MAX_RESULT_ROWS)`,
  };
}

/**
 * Rules the server enforces that decorators cannot state, written into the finished document:
 * - a body of a `*Dto` class is validated with `forbidNonWhitelisted` (http/input/validation.ts), so its schema
 *   has `additionalProperties: false`;
 * - `x_limit` is at most `maxRows` (MAX_RESULT_ROWS, a setting) wherever it is taken, and defaults to 1000 or
 *   `maxRows` when that is lower.
 */
export function documentServerRules(document: OpenAPIObject, maxRows: number): void {
  const schemas = (document.components?.schemas ?? {}) as Schemas;
  for (const operation of operationsOf(document)) {
    const body = operation.requestBody as RequestBodyObject | undefined;
    for (const media of Object.values(body?.content ?? {})) {
      const reference = (media.schema as ReferenceObject | undefined)?.$ref;
      const name = reference?.replace('#/components/schemas/', '');
      if (name?.endsWith('Dto') && schemas[name]) schemas[name].additionalProperties = false;
      const properties = (media.schema as SchemaObject | undefined)?.properties;
      const limit = properties?.x_limit as SchemaObject | undefined;
      if (limit) Object.assign(limit, limitBounds(maxRows));
    }
    for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
      if (parameter.in === 'query' && parameter.name === 'x_limit' && parameter.schema) {
        Object.assign(parameter.schema, limitBounds(maxRows));
      }
    }
  }
}

/** The bodies of a dataset's exports, by media type, beside its JSON result. */
export function exportContent(): Record<string, { schema: { type: 'string'; format?: 'binary' } }> {
  return Object.fromEntries(
    Object.values(EXPORT_MEDIA_TYPES).map(({ type, binary }) => [
      type,
      {
        schema: binary
          ? { type: 'string' as const, format: 'binary' as const }
          : { type: 'string' as const },
      },
    ]),
  );
}

/** What the 200 of a results operation says of its exports. */
export const EXPORTS_DESCRIPTION =
  'An `Accept` of an export type (quality values weighed), or `x_format`, exports the rows instead (every row unless `x_limit` or `x_offset` is given, as for a page): CSV, NDJSON, Parquet, an Arrow IPC stream or an Excel workbook; `x_format` adds `Content-Disposition: attachment`';
