import type { ParameterDefinition } from '@/parameters/parameter-definition';
import type { Project } from '@/project/project';

type Json = Record<string, unknown>;

function schemaOf(definition: ParameterDefinition): Json {
  switch (definition.widget) {
    case 'single_select': {
      const ids = definition.kind === 'select' ? definition.options.map((option) => option.id) : [];
      return ids.length > 0 ? { type: 'string', enum: ids } : { type: 'string' };
    }
    case 'multi_select':
      return { type: 'array', items: { type: 'string' } };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'date_range':
      return { type: 'array', items: { type: 'string', format: 'date' }, minItems: 2, maxItems: 2 };
    case 'number':
      return { type: 'number' };
    case 'number_range':
      return { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 };
    case 'text':
      return { type: 'string' };
  }
}

const BUILT_INS: Json[] = [
  {
    name: 'x_orientation',
    in: 'query',
    schema: { type: 'string', enum: ['records', 'rows', 'columns'], default: 'records' },
  },
  {
    name: 'x_select',
    in: 'query',
    schema: { type: 'array', items: { type: 'string' } },
    explode: true,
  },
  { name: 'x_limit', in: 'query', schema: { type: 'integer', minimum: 0, default: 1000 } },
  { name: 'x_offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
  { name: 'x_verify_params', in: 'query', schema: { type: 'boolean' } },
];

/**
 * OpenAPI paths for each dataset and dashboard of the project, with its own parameters as query
 * parameters: selections differ per item, so the generic `{dataset}` routes cannot describe them.
 */
export function projectItemPaths(project: Project, prefix: string): Record<string, Json> {
  const byName = new Map(project.parameters.map((definition) => [definition.name, definition]));
  const parametersOf = (names: string[]) =>
    names.flatMap((name) => {
      const definition = byName.get(name);
      if (!definition) return [];
      const schema = schemaOf(definition);
      return [
        {
          name,
          in: 'query',
          required: false,
          description: [definition.label, definition.description].filter(Boolean).join(': '),
          schema,
          ...(schema.type === 'array' ? { explode: true } : {}),
        },
      ];
    });
  const security = [{ bearer: [] }, { login: [] }, {}];
  const paths: Record<string, Json> = {};
  for (const dataset of project.datasets) {
    paths[`/${prefix}/datasets/${dataset.name}/results`] = {
      get: {
        tags: ['datasets (this project)'],
        summary: `${dataset.label} (${dataset.scope})`,
        description: dataset.description,
        operationId: `dataset_${dataset.name}_results`,
        parameters: [...parametersOf(dataset.parameters), ...BUILT_INS],
        security,
        responses: {
          '200': { description: 'Dataset result: schema, total_num_rows, data_details, data' },
        },
      },
    };
  }
  for (const dashboard of project.dashboards) {
    paths[`/${prefix}/dashboards/${dashboard.name}/results`] = {
      get: {
        tags: ['dashboards (this project)'],
        summary: `${dashboard.label} (${dashboard.scope}, ${dashboard.format})`,
        description: dashboard.description,
        operationId: `dashboard_${dashboard.name}_results`,
        parameters: parametersOf(dashboard.parameters),
        security,
        responses: {
          '200': {
            description: `The dashboard as ${dashboard.format.toUpperCase()}`,
            content: { [dashboard.format === 'png' ? 'image/png' : 'text/html']: {} },
          },
        },
      },
    };
  }
  return paths;
}
