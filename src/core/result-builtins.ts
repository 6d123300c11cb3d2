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
export const FORMATS = ['json', 'csv', 'ndjson', 'parquet', 'arrow', 'xlsx'] as const;

export type ResultFormat = (typeof FORMATS)[number];

/** The formats that export every row (all but `json`). */
export type ExportFormat = Exclude<ResultFormat, 'json'>;

/**
 * The media type each export is sent as (decisions.md, "Results"), named by `Accept` too; the OpenAPI
 * document lists them. Whether the body is text decides its schema there.
 */
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, { type: string; binary: boolean }> = {
  csv: { type: 'text/csv', binary: false },
  ndjson: { type: 'application/x-ndjson', binary: false },
  parquet: { type: 'application/vnd.apache.parquet', binary: true },
  arrow: { type: 'application/vnd.apache.arrow.stream', binary: true },
  xlsx: {
    type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    binary: true,
  },
};

/**
 * The values of `x_csv_formulas`, the first being the default (decisions.md, "Results"; docs/api.md,
 * "Exports"): how a CSV export writes its text cells. `escaped` writes each one quoted, with a `'` before one
 * that a spreadsheet would run as a formula (OWASP, "CSV Injection"); `raw` writes the values as stored.
 */
export const CSV_FORMULAS = ['escaped', 'raw'] as const;

export type CsvFormulas = (typeof CSV_FORMULAS)[number];
