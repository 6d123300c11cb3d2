import type { SchemaObject } from '@nestjs/swagger';
import { object, ref, Schemas } from '@/openapi/common-schemas';

/** OpenAPI schemas of the project information and of the data catalog of both layouts (interface 2.4, 2.5). */

const STRING: SchemaObject = { type: 'string' };
const NAMES: SchemaObject = { type: 'array', items: STRING };

const ITEM_PATHS = {
  parameters_path: { type: 'string', description: "Path of the item's parameters endpoint" },
  result_path: { type: 'string', description: "Path of the item's results endpoint" },
};

const RESULT_FORMAT: SchemaObject = { type: 'string', enum: ['html', 'png'] };

export const CATALOG_SCHEMAS: Schemas = {
  ProjectListing: object(
    {
      name: STRING,
      label: STRING,
      versions: {
        type: 'array',
        items: object({
          major_version: { type: 'integer' },
          minor_versions: { type: 'array', items: { type: 'integer' } },
          token_path: { type: 'string', description: 'Legacy login path of this version' },
          data_catalog_path: { type: 'string', description: 'Legacy data catalog path' },
        }),
      },
    },
    'The served project and its version, as the 0.4 service listed its projects',
  ),
  ProjectInfo: object({
    name: STRING,
    version: { type: 'string', description: '`v` and the major version, as in the paths' },
    label: STRING,
    description: STRING,
    service_version: { type: 'string', description: "This service's version" },
  }),
  DatasetEntry: object({
    name: STRING,
    label: STRING,
    description: STRING,
    schema: object({ fields: { type: 'array', items: ref('SchemaField') } }),
    parameters: { ...NAMES, description: 'Names of the parameters the dataset takes' },
    ...ITEM_PATHS,
  }),
  DashboardEntry: object({
    name: STRING,
    label: STRING,
    description: STRING,
    result_format: RESULT_FORMAT,
    parameters: { ...NAMES, description: 'Names of the parameters the dashboard takes' },
    ...ITEM_PATHS,
  }),
  CatalogConnection: {
    ...object({ name: STRING, label: STRING }, 'A connection (administrators only)'),
    additionalProperties: true,
  },
  CatalogModel: {
    ...object(
      {
        name: STRING,
        model_type: { type: 'string', enum: ['seed', 'source', 'build', 'dbview', 'federate'] },
        config: {
          type: 'object',
          additionalProperties: true,
          description: 'Its materialization, connection, columns and references',
        },
        is_queryable: { type: 'boolean', description: 'Whether query-models can read it' },
      },
      'A data model (administrators only)',
    ),
    additionalProperties: true,
  },
  LineageNode: object({
    name: STRING,
    type: { type: 'string', enum: ['model', 'dataset', 'dashboard'] },
  }),
  LineageEdge: {
    ...object(
      {
        type: {
          type: 'string',
          enum: ['buildtime', 'runtime'],
          description: '`buildtime` when the build makes the target, `runtime` when requests do',
        },
        source: ref('LineageNode'),
        target: ref('LineageNode'),
      },
      'An edge of the lineage graph (administrators only)',
    ),
    additionalProperties: true,
  },
  DataCatalog: object(
    {
      parameters: { type: 'array', items: ref('Widget') },
      datasets: { type: 'array', items: ref('DatasetEntry') },
      dashboards: { type: 'array', items: ref('DashboardEntry') },
      connections: { type: 'array', items: ref('CatalogConnection') },
      models: { type: 'array', items: ref('CatalogModel') },
      lineage: { type: 'array', items: ref('LineageEdge') },
    },
    'What the caller may open; connections, models and lineage are empty but for administrators',
  ),
  LegacyDatasetEntry: object({ name: STRING, label: STRING, description: STRING, ...ITEM_PATHS }),
  LegacyDashboardEntry: object({
    name: STRING,
    label: STRING,
    description: STRING,
    result_format: RESULT_FORMAT,
    ...ITEM_PATHS,
  }),
  LegacyDataCatalog: object(
    {
      datasets: { type: 'array', items: ref('LegacyDatasetEntry') },
      dashboards: { type: 'array', items: ref('LegacyDashboardEntry') },
    },
    'Public items for anonymous callers, with legacy paths',
  ),
};
