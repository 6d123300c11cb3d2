import type { ParameterObject, SchemaObject } from '@nestjs/swagger';
import { CSV_FORMULAS, DEFAULT_LIMIT, FORMATS, ORIENTATIONS } from '@/core/result-builtins';

/**
 * What the selection endpoints take (interface 4.3 to 4.5), for the generic paths (`{dataset}`, `{dashboard}`,
 * the legacy `{name}`) and for each item's own: the `x_` built-ins of each operation with their types and
 * bounds, and the selections. On a generic path the parameters are not known, so the selections are an open
 * map; on an item's own path (item-paths.ts) each parameter is a property of its own.
 */

/** The `x_` built-ins, each the same wherever it is taken; an item's own path narrows some (`enum`). */
export type BuiltIn =
  | 'x_orientation'
  | 'x_select'
  | 'x_limit'
  | 'x_offset'
  | 'x_verify_params'
  | 'x_parent_param'
  | 'x_format'
  | 'x_csv_formulas';

/**
 * The built-ins each kind of operation reads; any other `x_` name is ignored. The legacy results read only
 * `x_verify_params`, `x_format` and `x_csv_formulas` (the 0.4 service had no paging: `legacyResultWants`;
 * exports are in both layouts), the legacy dashboards only the first; the legacy parameters take `x_parent_param` as the current
 * ones do, hyphens for underscores included.
 */
export const TAKES = {
  results: [
    'x_orientation',
    'x_select',
    'x_limit',
    'x_offset',
    'x_verify_params',
    'x_format',
    'x_csv_formulas',
  ],
  parameters: ['x_parent_param', 'x_verify_params'],
  dashboardResults: ['x_verify_params'],
  legacyResults: ['x_verify_params', 'x_format', 'x_csv_formulas'],
  legacyDashboardResults: ['x_verify_params'],
  legacyParameters: ['x_parent_param', 'x_verify_params'],
} as const satisfies Record<string, readonly BuiltIn[]>;

export type Operation = keyof typeof TAKES;

/**
 * Bounds that come from the server's settings: MAX_RESULT_ROWS caps `x_limit` (and its default). Without
 * them, as in a decorator, `documentServerRules` writes them into the finished document.
 */
export interface BuiltInBounds {
  maxRows?: number;
  /** An item's column names: the values `x_select` may list. */
  columns?: string[];
  /** An item's parameter names: the values `x_parent_param` may take. */
  parameters?: string[];
}

function builtInSchema(name: BuiltIn, bounds: BuiltInBounds, legacy: boolean): SchemaObject {
  const { maxRows, columns = [], parameters = [] } = bounds;
  switch (name) {
    case 'x_orientation':
      return { type: 'string', enum: [...ORIENTATIONS], default: ORIENTATIONS[0] };
    case 'x_select':
      return {
        type: 'array',
        items:
          columns.length > 0 ? { type: 'string', enum: columns } : { type: 'string', minLength: 1 },
        description: 'Columns to include (default: all)',
      };
    case 'x_limit':
      return {
        type: 'integer',
        minimum: 0,
        ...(maxRows === undefined ? {} : { maximum: maxRows }),
        default: maxRows === undefined ? DEFAULT_LIMIT : Math.min(DEFAULT_LIMIT, maxRows),
        description: `Rows returned, up to ${maxRows ?? 'MAX_RESULT_ROWS'}${maxRows === undefined ? '' : ' (MAX_RESULT_ROWS)'}`,
      };
    case 'x_offset':
      return {
        type: 'integer',
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        default: 0,
        description: 'Rows skipped',
      };
    case 'x_verify_params':
      return {
        type: 'boolean',
        description: 'When true, a name the endpoint does not take is a 400 unknown_parameter',
      };
    case 'x_format':
      return {
        type: 'string',
        enum: [...FORMATS],
        description:
          'The format, over Accept, as a download (Content-Disposition): json is the result, the others export the rows (every row unless x_limit or x_offset is given)',
      };
    case 'x_csv_formulas':
      return {
        type: 'string',
        enum: [...CSV_FORMULAS],
        default: CSV_FORMULAS[0],
        description:
          "How a CSV export writes text cells: escaped, each quoted and one that a spreadsheet would run as a formula (beginning with =, +, -, @, a tab, a carriage return or NUL, spaces and line feeds before them included) with a ' before it; raw, the values as stored. Numbers, booleans, dates and timestamps are never changed; other formats ignore it",
      };
    case 'x_parent_param':
      return {
        type: 'string',
        // The current layout refuses an empty trigger; the legacy one reads it as none (selection-request.ts).
        ...(parameters.length > 0 ? { enum: parameters } : legacy ? {} : { minLength: 1 }),
        description: legacy
          ? 'The parameter whose change triggered the refresh (hyphens for underscores accepted)'
          : 'The parameter whose change triggered the refresh',
      };
  }
}

/** The built-ins of an operation by name, with their schemas. */
export function builtInSchemas(
  operation: Operation,
  bounds: BuiltInBounds = {},
): Record<string, SchemaObject> {
  const legacy = operation.startsWith('legacy');
  return Object.fromEntries(
    TAKES[operation].map((name) => [name, builtInSchema(name, bounds, legacy)]),
  );
}

/** Built-ins whose empty query value (`x_limit=`) is read as not given: their default. */
const EMPTY_IS_DEFAULT = new Set(['x_select', 'x_limit', 'x_offset', 'x_format', 'x_csv_formulas']);

/** The built-ins as query parameters of a GET: arrays as the name repeated. */
export function builtInQuery(builtIns: Record<string, SchemaObject>): ParameterObject[] {
  return Object.entries(builtIns).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
    ...(schema.type === 'array' ? { explode: true } : {}),
    ...(EMPTY_IS_DEFAULT.has(name) ? { allowEmptyValue: true } : {}),
  }));
}

/** A selection on GET: one value, or the name repeated once per value (interface 4.4). */
const QUERY_SELECTION: SchemaObject = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
};

/**
 * A selection in a JSON body of the current layout: a string (an id, a date, a text, a number as text), a
 * number, or an array of those (ids, a range); null selects nothing. Stated as the description of an open
 * map, not as its schema: a name that is not one of the endpoint's parameters is ignored whatever its value
 * (decisions.md, "Parameters"), so a schema of those forms would forbid bodies the service accepts. Each
 * item's own paths (item-paths.ts) state its parameters exactly.
 */
const JSON_SELECTIONS_DESCRIPTION =
  "Parameter selections by name: a string, a number or an array of those, null selecting nothing; names that are not the endpoint's parameters are ignored (with x_verify_params=true, refused). A null built-in is the same as leaving it out";

/**
 * The selections of a generic GET as one query parameter: an object whose entries become `name=value`
 * (`style: form, explode: true`), an array value the name repeated. Its own name never reaches the server.
 */
export function selectionsQuery(legacy: boolean): ParameterObject {
  return {
    name: 'selections',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description: legacy
      ? 'Parameter selections by name, each one value or the name repeated; hyphens may stand for underscores, and lists may be one comma-joined value'
      : 'Parameter selections by name (interface 4.4): one value, or the name repeated once per value',
    schema: { type: 'object', additionalProperties: QUERY_SELECTION },
  };
}

/**
 * The JSON body of a generic POST: the operation's built-ins (null is the same as leaving one out) and the
 * selections by name. The legacy layout reads any JSON value leniently (interface 4.4), so its map is open.
 */
export function selectionsBody(
  builtIns: Record<string, SchemaObject>,
  legacy: boolean,
): SchemaObject {
  return {
    type: 'object',
    description: legacy
      ? 'Parameter selections by name, any JSON value read leniently (comma-joined or JSON-list strings, numbers)'
      : JSON_SELECTIONS_DESCRIPTION,
    properties: Object.fromEntries(
      Object.entries(builtIns).map(([name, schema]) => [name, { ...schema, nullable: true }]),
    ),
    additionalProperties: true,
  };
}
