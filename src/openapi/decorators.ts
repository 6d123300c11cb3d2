import { applyDecorators } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiOAuth2,
  ApiOkResponse,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiSecurity,
} from '@nestjs/swagger';
import {
  EXPORTS_DESCRIPTION,
  ErrorStatus,
  errorResponse,
  exportContent,
  Layout,
  ref,
} from '@/openapi/common-schemas';
import {
  builtInQuery,
  builtInSchemas,
  Operation,
  selectionsBody,
  selectionsQuery,
} from '@/openapi/selection-schemas';

/** Decorators of the OpenAPI document: what routes take and answer (schemas in `*-schemas.ts`). */

/** The route takes a bearer token (Swagger UI's Authorize button fills it, through the login endpoint). */
export const ApiToken = () => applyDecorators(ApiBearerAuth('bearer'), ApiOAuth2([], 'login'));

/**
 * The route may be called without a token (`@Public()`, `@OptionalAuth()`): the empty requirement `{}` says
 * so to generated clients and fuzzers; a token that is sent is still checked (401 `invalid_token`).
 */
export const ApiOptionalToken = () => applyDecorators(ApiToken(), ApiSecurity({}));

/** The `:project` and `:version` path segments of both layouts. */
export const ApiProjectPath = () =>
  applyDecorators(
    ApiParam({
      name: 'project',
      type: String,
      description: 'The project name',
      example: 'expenses',
    }),
    ApiParam({
      name: 'version',
      type: String,
      description: '`v` and the project major version',
      example: 'v1',
    }),
  );

/** A 200 with a JSON body of the named schema (or an array of it). */
export const ApiJson = (name: string, description: string, isArray = false) =>
  ApiOkResponse({
    description,
    content: {
      'application/json': {
        schema: isArray ? { type: 'array', items: ref(name) } : ref(name),
      },
    },
  });

/** A 200 whose body is empty. */
export const ApiEmpty = (description: string) => ApiOkResponse({ description });

function errorDecorators(layout: Layout, statuses: ErrorStatus[]) {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, ...errorResponse(layout, status) })),
  );
}

/** Errors a route (or every route of a controller) of the current layout can answer. */
export const ApiErrors = (...statuses: ErrorStatus[]) => errorDecorators('current', statuses);

/** Errors a route (or every route of a controller) of the legacy layout can answer. */
export const ApiLegacyErrors = (...statuses: ErrorStatus[]) => errorDecorators('legacy', statuses);

/** The 200 (and 304 on GET) of the generic result routes: JSON of the layout's shape, or an export. */
export const ApiDatasetResult = (layout: Layout, get: boolean) =>
  applyDecorators(
    ApiOkResponse({
      description: `The result as JSON. ${EXPORTS_DESCRIPTION}`,
      content: {
        'application/json': {
          schema: ref(layout === 'current' ? 'DatasetResult' : 'LegacyDatasetResult'),
        },
        ...exportContent(),
      },
    }),
    ...(get
      ? [
          ApiResponse({
            status: 304,
            description: 'Not modified: the `If-None-Match` copy is current',
          }),
        ]
      : []),
  );

/**
 * What a generic selection endpoint (`{dataset}`, `{dashboard}`, the legacy `{name}`, `P/parameters`) takes:
 * the built-ins of its operation, typed and bounded, and the selections as an open map (selection-schemas.ts).
 * On GET they are query parameters; on POST one JSON body, which may be left out (no selections).
 */
export const ApiSelections = (operation: Operation, method: 'get' | 'post') => {
  const builtIns = builtInSchemas(operation);
  const legacy = operation.startsWith('legacy');
  if (method === 'post') {
    return ApiBody({ required: false, schema: selectionsBody(builtIns, legacy) });
  }
  return applyDecorators(
    ...[...builtInQuery(builtIns), selectionsQuery(legacy)].map(
      ({ in: _in, name, schema = {}, ...options }) => ApiQuery({ ...options, name, schema }),
    ),
  );
};
