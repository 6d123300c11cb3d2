import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { ref, Schemas } from '@/openapi/common-schemas';
import { ORIENTATIONS } from '@/core/result-builtins';
import type { ColumnSpec, ColumnType, DatasetSpec } from '@/core/project/project';

/**
 * The schemas of results in the OpenAPI document: the generic ones of both layouts, and each dataset's own,
 * typed by its columns (item-paths.ts gives them their paths).
 */

type Schema = SchemaObject | ReferenceObject;

const COLUMN_TYPES: ColumnType[] = [
  'string',
  'integer',
  'number',
  'decimal',
  'boolean',
  'date',
  'datetime',
  'time',
];

/** The JSON value of a cell of each column type; NULL is `null` (decisions.md, "Results"). */
function cellSchema(type: ColumnType | undefined): Schema {
  switch (type) {
    case 'string':
      return { type: 'string', nullable: true };
    case 'integer':
      return {
        anyOf: [{ type: 'integer' }, { type: 'string', description: 'Beyond 2^53, every digit' }],
        nullable: true,
      };
    case 'number':
      return { type: 'number', nullable: true };
    case 'decimal':
      return {
        anyOf: [
          { type: 'number' },
          { type: 'string', description: 'When a number would round it' },
        ],
        nullable: true,
      };
    case 'boolean':
      return { type: 'boolean', nullable: true };
    case 'date':
      return { type: 'string', format: 'date', nullable: true };
    case 'datetime':
      return { type: 'string', format: 'date-time', nullable: true };
    case 'time':
      return { type: 'string', description: 'HH:MM:SS', nullable: true };
    case undefined:
      return ref('Cell');
  }
}

const SCHEMA_FIELD: SchemaObject = {
  type: 'object',
  required: ['name', 'type', 'description', 'category', 'condition'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', enum: COLUMN_TYPES },
    description: { type: 'string', description: 'May be empty' },
    category: { type: 'string', enum: ['dimension', 'measure', 'misc'] },
    condition: { type: 'string', description: 'When the column is present; may be empty' },
  },
};

/** The current layout's result, over the schemas of one record, one row and the columns. */
function resultSchema(
  field: Schema,
  record: Schema,
  row: Schema,
  columns: Schema,
  description: string,
): SchemaObject {
  return {
    type: 'object',
    description,
    required: ['schema', 'total_num_rows', 'data_details', 'data'],
    properties: {
      schema: {
        type: 'object',
        required: ['fields'],
        properties: { fields: { type: 'array', items: field } },
      },
      total_num_rows: { type: 'integer', description: 'Rows of the whole result' },
      data_details: {
        type: 'object',
        required: ['num_rows', 'orientation'],
        properties: {
          num_rows: { type: 'integer', description: 'Rows in this response' },
          orientation: { type: 'string', enum: [...ORIENTATIONS] },
        },
      },
      data: {
        description:
          '`records`: an array of objects; `rows`: an array of arrays; `columns`: an object of arrays',
        anyOf: [{ type: 'array', items: record }, { type: 'array', items: row }, columns],
      },
    },
  };
}

/** Result schemas that hold for every dataset and for query-models. */
export const RESULT_SCHEMAS: Schemas = {
  Cell: {
    description: 'A value: string, number, boolean or null',
    anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    nullable: true,
  },
  SchemaField: SCHEMA_FIELD,
  DatasetResult: resultSchema(
    ref('SchemaField'),
    { type: 'object', additionalProperties: ref('Cell') },
    { type: 'array', items: ref('Cell') },
    { type: 'object', additionalProperties: { type: 'array', items: ref('Cell') } },
    'A result (interface 2.9); each dataset has its own, typed, under its own path',
  ),
  LegacyDatasetResult: {
    type: 'object',
    required: ['schema', 'data'],
    properties: {
      schema: {
        type: 'object',
        required: ['fields', 'dimensions'],
        properties: {
          fields: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'type'],
              properties: {
                name: { type: 'string' },
                type: {
                  type: 'string',
                  enum: ['string', 'number', 'integer', 'boolean', 'datetime'],
                },
              },
            },
          },
          dimensions: { type: 'array', items: { type: 'string' } },
        },
      },
      data: {
        type: 'array',
        description: 'Every row, as an object keyed by column name',
        items: { type: 'object', additionalProperties: ref('Cell') },
      },
    },
  },
};

/** `expenses_by_month`'s schemas are `datasets.expenses_by_month.Result` and so on. */
export function schemaName(kind: 'datasets' | 'dashboards', item: string, part: string): string {
  return `${kind}.${item}.${part}`;
}

/** A dataset's own schemas: its result typed by its columns, and its parameters by their names. */
export function datasetSchemas(dataset: DatasetSpec, columns: ColumnSpec[]): Schemas {
  const name = (part: string) => schemaName('datasets', dataset.name, part);
  const typed = columns.length > 0;
  const cells = columns.map((column) => cellSchema(column.type));
  const distinct = [...new Map(cells.map((cell) => [JSON.stringify(cell), cell])).values()];
  const record: SchemaObject = typed
    ? {
        type: 'object',
        additionalProperties: false,
        description: 'A row: the columns chosen with x_select (all by default)',
        properties: Object.fromEntries(columns.map((column, i) => [column.name, cells[i]])),
      }
    : { type: 'object', additionalProperties: ref('Cell') };
  const columnArrays: SchemaObject = typed
    ? {
        type: 'object',
        additionalProperties: false,
        properties: Object.fromEntries(
          columns.map((column, i) => [column.name, { type: 'array', items: cells[i] }]),
        ),
      }
    : { type: 'object', additionalProperties: { type: 'array', items: ref('Cell') } };
  const row: SchemaObject = {
    type: 'array',
    items: typed ? (distinct.length === 1 ? distinct[0] : { anyOf: distinct }) : ref('Cell'),
    description: 'A row: values in the order of schema.fields',
  };
  const field: Schema = typed
    ? {
        allOf: [
          ref('SchemaField'),
          {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', enum: columns.map((column) => column.name) } },
          },
        ],
      }
    : ref('SchemaField');
  const widget: Schema =
    dataset.parameters.length > 0
      ? {
          allOf: [
            ref('Widget'),
            {
              type: 'object',
              required: ['name'],
              properties: { name: { type: 'string', enum: dataset.parameters } },
            },
          ],
        }
      : ref('Widget');
  return {
    [name('Record')]: record,
    [name('Row')]: row,
    [name('Columns')]: columnArrays,
    [name('Result')]: resultSchema(
      field,
      ref(name('Record')),
      ref(name('Row')),
      ref(name('Columns')),
      `${dataset.label}: a result`,
    ),
    [name('Parameters')]: {
      type: 'object',
      required: ['parameters'],
      properties: { parameters: { type: 'array', items: widget } },
    },
  };
}
