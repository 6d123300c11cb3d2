import type { Caller } from '@/core/caller';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { selectionValueSchema } from '@/core/parameters/selection-schema';
import type { WidgetJson } from '@/core/parameters/widget-json';
import type { DashboardSpec, DatasetSpec } from '@/core/project/project';

/**
 * The JSON Schemas of the MCP tools, made from the served project as one caller sees it: the names of the
 * items the caller may open as enums, each parameter's options or bounds for that caller, the project's
 * labels and descriptions. Pure: the service hands it what the catalog and parameters services answer.
 *
 * What a tool advertises is stricter than what it validates (see `mcp-tools.ts`): an assistant reads the
 * enums and bounds, while a value outside them still reaches the service, which refuses it with the code
 * and message of the HTTP endpoint (`authentication_required` for a private item, not a schema error).
 */

export type JsonSchema = Record<string, unknown>;

/** The items a caller may open, with the parameter catalog and widgets those items show for that caller. */
export interface ToolSubjects {
  datasets: DatasetSpec[];
  dashboards: DashboardSpec[];
  catalog: ParameterCatalog;
  /** Every parameter's widget for the default selections, as the caller sees it. */
  widgets: WidgetJson[];
}

function sentence(parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined && part !== '').join(': ');
}

function optionList(options: { id: string; label: string }[]): string {
  return options
    .map((option) => (option.id === option.label ? option.id : `${option.id}=${option.label}`))
    .join(', ');
}

/**
 * One parameter's selection: its shape as the OpenAPI document states it ({@link selectionValueSchema}),
 * narrowed to the options and bounds the caller sees, and a description that gives them with the default.
 * A parameter whose options or bounds depend on a parent's selection lists the default's in its
 * description only: the others are for the dataset_parameters tool to say.
 */
export function selectionSchema(widget: WidgetJson, parent: string | null): JsonSchema {
  const about = sentence([widget.label, widget.description]);
  const child =
    parent === null
      ? ''
      : `. Depends on ${parent}: dataset_parameters gives its choices for a selection of ${parent}`;
  if (widget.widget_type === 'disabled') {
    return { description: `${about}. Disabled for the default selections${child}` };
  }
  const own = parent === null;
  const shape = selectionValueSchema(widget.widget_type, {
    optionIds: own && 'options' in widget ? widget.options.map((option) => option.id) : undefined,
    bounds:
      own && 'min_value' in widget
        ? { minimum: widget.min_value, maximum: widget.max_value }
        : undefined,
  });
  const description = `${about}. ${choices(widget)}${child}`;
  // Advice for the assistant: the service takes a repeated id as one (selection-reader.ts).
  if (widget.widget_type === 'multi_select') return { ...shape, uniqueItems: true, description };
  return { ...shape, description };
}

/** What a widget takes and its default, as words. */
function choices(widget: Exclude<WidgetJson, { widget_type: 'disabled' }>): string {
  switch (widget.widget_type) {
    case 'single_select':
      return `One of ${optionList(widget.options)}; default ${widget.selected_id ?? 'none'}`;
    case 'multi_select':
      return `Any of ${optionList(widget.options)}; none selected means all`;
    case 'date':
      return `A date from ${widget.min_date} to ${widget.max_date}; default ${widget.selected_date}`;
    case 'date_range':
      return `[start, end] within ${widget.min_date}..${widget.max_date}; default [${widget.selected_start_date}, ${widget.selected_end_date}]`;
    case 'number':
      return `From ${widget.min_value} to ${widget.max_value} by ${widget.increment}; default ${widget.selected_value}`;
    case 'number_range':
      return `[lower, upper] within ${widget.min_value}..${widget.max_value} by ${widget.increment}; default [${widget.selected_lower_value}, ${widget.selected_upper_value}]`;
    case 'text':
      return `Text; default "${widget.entered_text}"`;
  }
}

/** The selections object of the items given: each parameter any of them takes, once. */
export function selectionsSchema(
  subjects: ToolSubjects,
  items: { parameters: string[] }[],
): JsonSchema {
  const used = new Set(items.flatMap((item) => item.parameters));
  const properties: Record<string, JsonSchema> = {};
  for (const widget of subjects.widgets) {
    if (!used.has(widget.name)) continue;
    properties[widget.name] = selectionSchema(
      widget,
      subjects.catalog.definition(widget.name)?.parent ?? null,
    );
  }
  return {
    type: 'object',
    properties,
    additionalProperties: false,
    description:
      "Parameter selections by name; a parameter left out takes its default, one the item does not take is ignored. The catalog tool lists each item's parameters",
  };
}

/** `name: label, description` of each item, for the description of its enum. */
function itemsDescription(items: { name: string; label: string; description: string }[]): string {
  return items
    .map((item) => `${item.name}: ${sentence([item.label, item.description])}`)
    .join('; ');
}

export function itemNameSchema(
  items: { name: string; label: string; description: string }[],
): JsonSchema {
  return items.length === 0
    ? { type: 'string', description: 'None is open to you: sign in to see more' }
    : {
        type: 'string',
        enum: items.map((item) => item.name),
        description: itemsDescription(items),
      };
}

/** The input of dataset_parameters. */
export function datasetParametersInput(subjects: ToolSubjects): JsonSchema {
  return {
    type: 'object',
    properties: {
      dataset: itemNameSchema(subjects.datasets),
      selections: selectionsSchema(subjects, subjects.datasets),
    },
    required: ['dataset'],
    additionalProperties: false,
  };
}

/** The input of dataset_rows. */
export function datasetRowsInput(
  subjects: ToolSubjects,
  rows: { default: number; max: number },
): JsonSchema {
  return {
    type: 'object',
    properties: {
      dataset: itemNameSchema(subjects.datasets),
      selections: selectionsSchema(subjects, subjects.datasets),
      columns: {
        type: 'array',
        items: { type: 'string' },
        description: 'Columns to return, in this order (the catalog lists them); all when left out',
      },
      limit: {
        type: 'integer',
        minimum: 0,
        maximum: rows.max,
        default: rows.default,
        description: `Rows to return, at most ${rows.max}`,
      },
      offset: {
        type: 'integer',
        minimum: 0,
        default: 0,
        description: 'Rows to skip: for the next page',
      },
    },
    required: ['dataset'],
    additionalProperties: false,
  };
}

/** The input of dataset_export. */
export function datasetExportInput(subjects: ToolSubjects): JsonSchema {
  return {
    type: 'object',
    properties: {
      dataset: itemNameSchema(subjects.datasets),
      format: {
        type: 'string',
        enum: [...EXPORT_LINK_FORMATS],
        default: 'csv',
        description: 'The file: csv, parquet or xlsx',
      },
      selections: selectionsSchema(subjects, subjects.datasets),
      columns: {
        type: 'array',
        items: { type: 'string' },
        description: 'Columns to export, in this order (the catalog lists them); all when left out',
      },
    },
    required: ['dataset'],
    additionalProperties: false,
  };
}

/** The input of dashboard. */
export function dashboardInput(subjects: ToolSubjects): JsonSchema {
  return {
    type: 'object',
    properties: {
      dashboard: itemNameSchema(subjects.dashboards),
      selections: selectionsSchema(subjects, subjects.dashboards),
      format: {
        type: 'string',
        enum: ['png', 'html'],
        default: 'png',
        description:
          'png (default): an image of the dashboard, whatever its own format; html: its page as text, within a size cap',
      },
    },
    required: ['dashboard'],
    additionalProperties: false,
  };
}

/** The input of query_models. */
export function queryModelsInput(rows: { default: number; max: number }): JsonSchema {
  return {
    type: 'object',
    properties: {
      sql: {
        type: 'string',
        minLength: 1,
        description:
          "Read-only DuckDB SQL over the project's models (the catalog's models for administrators), under the query time limit",
      },
      limit: { type: 'integer', minimum: 0, maximum: rows.max, default: rows.default },
      offset: { type: 'integer', minimum: 0, default: 0 },
    },
    required: ['sql'],
    additionalProperties: false,
  };
}

/** The formats dataset_export makes links to (ExportLinks' LINK_FORMATS). */
export const EXPORT_LINK_FORMATS = ['csv', 'parquet', 'xlsx'] as const;

/** Every tool the server has; which of them a caller is offered depends on the caller (mcp.service.ts). */
export const TOOL_NAMES = [
  'catalog',
  'dataset_parameters',
  'dataset_rows',
  'dataset_export',
  'dashboard',
  'query_models',
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The tools a caller is offered: an embedding token's holder those of its item's kind (it opens nothing
 * else), an administrator query_models besides. A tool not offered is not listed, and a call of it is
 * refused by the SDK as an unknown tool (audited `forbidden`).
 */
export function offeredTools(caller: Caller): ToolName[] {
  if (caller.embed) {
    return caller.embed.kind === 'dashboard'
      ? ['catalog', 'dashboard']
      : ['catalog', 'dataset_parameters', 'dataset_rows'];
  }
  return TOOL_NAMES.filter((tool) => tool !== 'query_models' || caller.isAdmin);
}

/** What the validator checks of each tool's input: the JSON types; the service checks the values. */
export const LOOSE_INPUTS: Record<ToolName, JsonSchema> = {
  catalog: { type: 'object', properties: {}, additionalProperties: false },
  dataset_parameters: {
    type: 'object',
    properties: { dataset: { type: 'string' }, selections: { type: 'object' } },
    required: ['dataset'],
    additionalProperties: false,
  },
  dataset_rows: {
    type: 'object',
    properties: {
      dataset: { type: 'string' },
      selections: { type: 'object' },
      columns: { type: 'array', items: { type: 'string' } },
      limit: { type: 'integer' },
      offset: { type: 'integer' },
    },
    required: ['dataset'],
    additionalProperties: false,
  },
  dataset_export: {
    type: 'object',
    properties: {
      dataset: { type: 'string' },
      format: { type: 'string' },
      selections: { type: 'object' },
      columns: { type: 'array', items: { type: 'string' } },
    },
    required: ['dataset'],
    additionalProperties: false,
  },
  dashboard: {
    type: 'object',
    properties: {
      dashboard: { type: 'string' },
      selections: { type: 'object' },
      format: { type: 'string' },
    },
    required: ['dashboard'],
    additionalProperties: false,
  },
  query_models: {
    type: 'object',
    properties: {
      sql: { type: 'string' },
      limit: { type: 'integer' },
      offset: { type: 'integer' },
    },
    required: ['sql'],
    additionalProperties: false,
  },
};

const FIELD: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    description: { type: 'string' },
  },
  required: ['name', 'type'],
};

/** A page of rows: column names once, each row an array in their order. */
const ROWS_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    columns: { type: 'array', items: FIELD },
    rows: { type: 'array', items: { type: 'array' } },
    total_rows: { type: 'integer' },
    offset: { type: 'integer' },
    left_out: { type: 'integer', description: 'Rows of the result not in this page' },
    next_offset: {
      type: ['integer', 'null'],
      description: 'The offset of the next page; null at the end',
    },
  },
  required: ['columns', 'rows', 'total_rows', 'offset', 'left_out', 'next_offset'],
};

const WIDGET: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, widget_type: { type: 'string' } },
  required: ['name', 'widget_type'],
};

export const OUTPUTS: Record<ToolName, JsonSchema> = {
  catalog: {
    type: 'object',
    properties: {
      datasets: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            label: { type: 'string' },
            description: { type: 'string' },
            parameters: { type: 'array', items: { type: 'string' } },
            columns: { type: 'array', items: FIELD },
          },
          required: ['name', 'label', 'parameters', 'columns'],
        },
      },
      dashboards: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            label: { type: 'string' },
            description: { type: 'string' },
            format: { type: 'string', enum: ['png', 'html'] },
            parameters: { type: 'array', items: { type: 'string' } },
          },
          required: ['name', 'label', 'format', 'parameters'],
        },
      },
      parameters: { type: 'array', items: WIDGET },
    },
    required: ['datasets', 'dashboards', 'parameters'],
  },
  dataset_parameters: {
    type: 'object',
    properties: { dataset: { type: 'string' }, parameters: { type: 'array', items: WIDGET } },
    required: ['dataset', 'parameters'],
  },
  dataset_rows: ROWS_OUTPUT,
  dataset_export: {
    type: 'object',
    properties: {
      dataset: { type: 'string' },
      format: { type: 'string', enum: [...EXPORT_LINK_FORMATS] },
      url: {
        type: 'string',
        description: 'Fetch it with a plain GET, no header: the link is the credential',
      },
      expires_at: { type: 'string', description: 'When the link stops working (UTC, ISO 8601)' },
      total_rows: { type: 'integer', description: 'The rows the export holds' },
    },
    required: ['dataset', 'format', 'url', 'expires_at', 'total_rows'],
  },
  dashboard: {
    type: 'object',
    properties: {
      dashboard: { type: 'string' },
      format: { type: 'string', enum: ['png', 'html'] },
      content_type: { type: 'string' },
      bytes: { type: 'integer' },
      over_cap: {
        type: 'boolean',
        description: 'The HTML page is over the cap of an answer: open it at url',
      },
      url: {
        type: 'string',
        description: "The dashboard's HTTP URL, when the page is over the cap",
      },
    },
    required: ['dashboard', 'format', 'content_type', 'bytes'],
  },
  query_models: ROWS_OUTPUT,
};
