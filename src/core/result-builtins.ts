/**
 * What the `x_` built-ins of a JSON result may say (interface 4.3), in the core because two floors read them:
 * the results feature that applies them (datasets/results/result-options.ts) and the OpenAPI document that
 * states them (openapi/), which sits below the features and may not import them.
 */

/** The values of `x_orientation`, the first being the default. */
export const ORIENTATIONS = ['records', 'rows', 'columns'] as const;

export type Orientation = (typeof ORIENTATIONS)[number];

/** The rows of a result when `x_limit` is not given (interface 8), unless MAX_RESULT_ROWS is lower. */
export const DEFAULT_LIMIT = 1000;

/**
 * The values of `x_format` served (decisions.md, "Results"), in the order a 406 lists them; `json` is the
 * ordinary result, the others export every row.
 */
export const FORMATS = ['json', 'csv', 'ndjson'] as const;

export type ResultFormat = (typeof FORMATS)[number];
