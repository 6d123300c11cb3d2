import { SchemaField, schemaFields } from '@/datasets/results/result-shape';
import type { Model, ModelKind, Project } from '@/core/project/project';

/**
 * The administrators' part of the data catalog, in the b-era shapes that Squirrels Studio v1 draws:
 * connections `{name, label}`, models `{name, model_type, config, is_queryable}`. Pure.
 */

export type BEraModelType = 'seed' | 'source' | 'build' | 'dbview' | 'federate';

/** The b-era name of each model kind: runtime models were called federate models. */
const MODEL_TYPE: Record<ModelKind, BEraModelType> = {
  seed: 'seed',
  source: 'source',
  build: 'build',
  runtime: 'federate',
  dbview: 'dbview',
};

/** The name of the built environment where seeds, sources and build models live. */
export const DEFAULT_CONNECTION = 'default';

export function catalogConnections(project: Project): Record<string, unknown>[] {
  return [
    {
      name: DEFAULT_CONNECTION,
      label: 'Virtual data environment (DuckDB)',
      type: 'duckdb',
      description: 'The DuckDB database built from the project',
    },
    ...project.connections.map((connection) => ({
      name: connection.name,
      label: connection.description || connection.name,
      type: connection.kind,
      description: connection.description,
    })),
  ];
}

/** A model's schema fields from its column metadata (the catalog runs no query). */
export function declaredFields(model: Model | undefined): SchemaField[] {
  const columns = model?.columns ?? [];
  return schemaFields(
    {
      columns: columns.map((column) => ({
        name: column.name,
        type: column.type ?? 'string',
        databaseType: '',
      })),
    },
    columns,
  );
}

function columnsOf(model: Model): Record<string, unknown>[] {
  return declaredFields(model).map((field) => ({ ...field, depends_on: [], passthrough: false }));
}

/** What a model is made of: its materialisation, connection, table and references, as `config`. */
function configOf(model: Model): Record<string, unknown> {
  const common = { description: model.description, columns: columnsOf(model) };
  switch (model.kind) {
    case 'seed':
      return { ...common, materialization: 'table', connection: DEFAULT_CONNECTION };
    case 'source':
      return {
        ...common,
        materialization: 'table',
        connection: model.connection,
        ...(model.table ? { table: model.table.join('.') } : {}),
        load_to_duckdb: true,
      };
    case 'build':
      return {
        ...common,
        materialization: 'table',
        connection: DEFAULT_CONNECTION,
        depends_on: model.refs,
      };
    case 'runtime':
      return { ...common, materialization: 'runtime', depends_on: model.refs };
    case 'dbview':
      return {
        ...common,
        materialization: 'runtime',
        connection: model.connection,
        depends_on: model.refs,
      };
  }
}

/**
 * Every model of the project with its b-era type and configuration. `is_queryable` says whether
 * `query-models` can read it: dbview models run on their own database, so they cannot.
 */
export function catalogModels(project: Project): Record<string, unknown>[] {
  return project.models.map((model) => ({
    name: model.name,
    model_type: MODEL_TYPE[model.kind],
    config: configOf(model),
    is_queryable: model.kind !== 'dbview',
  }));
}
