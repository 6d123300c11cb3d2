import type {
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponsesObject,
  SchemaObject,
} from '@nestjs/swagger';
import {
  BODY_ERRORS,
  COMMON_ERRORS,
  EXPORTS_DESCRIPTION,
  ErrorStatus,
  errorResponses,
  exportContent,
  ref,
  Schemas,
} from '@/openapi/common-schemas';
import { builtInQuery, builtInSchemas } from '@/openapi/selection-schemas';
import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { selectionValueSchema } from '@/core/parameters/selection-schema';
import type { Project, Scope } from '@/core/project/project';
import { findModel } from '@/core/project/project';
import { datasetSchemas, schemaName } from '@/openapi/result-schemas';

/**
 * The OpenAPI document's part for the project's items: for each dataset and dashboard its own paths,
 * whose selections, columns and parameter names come from the project definition, so that a typed client
 * knows them. Their result schemas are in result-schemas.ts.
 */

type Schema = SchemaObject | ReferenceObject;

/** A selection on GET (interface 4.4): repeated names for lists. */
function querySchemaOf(definition: ParameterDefinition): SchemaObject {
  return selectionValueSchema(definition.widget, { optionIds: staticOptionIds(definition) });
}

/** A selection in a JSON body: numbers may also be strings holding a decimal number. */
function bodySchemaOf(definition: ParameterDefinition): SchemaObject {
  return selectionValueSchema(definition.widget, {
    optionIds: staticOptionIds(definition),
    decimalStrings: true,
  });
}

/** Option ids written in project.yml; options from a query change with the data, so they are not listed. */
function staticOptionIds(definition: ParameterDefinition): string[] | undefined {
  if (definition.kind !== 'select' || definition.optionsSql !== null) return undefined;
  const ids = definition.options.map((option) => option.id);
  return ids.length > 0 ? ids : undefined;
}

/**
 * The parent's option ids that enable a parameter which is disabled otherwise (no variant for every parent
 * option), or null when it is always enabled or its variants come from a query not run yet.
 */
function enablingIds(definition: ParameterDefinition): string[] | null {
  if (definition.kind !== 'value' || definition.parent === null) return null;
  const variants = definition.variants;
  if (variants.length === 0 || variants.some((variant) => variant.parentOptionIds === null)) {
    return null;
  }
  return [...new Set(variants.flatMap((variant) => variant.parentOptionIds ?? []))];
}

function describe(definition: ParameterDefinition): string {
  const text = [definition.label, definition.description].filter(Boolean).join(': ');
  const ids = enablingIds(definition);
  if (ids === null) return text;
  return (
    `${text}. Disabled unless ${definition.parent} is ${ids.join(' or ')}: a value sent while it ` +
    'is disabled is ignored (400 unknown_parameter with x_verify_params=true)'
  );
}

/**
 * A selection's schema, with `x-disabled-unless` (`{parent: [option ids]}`) when the parameter is disabled
 * for the other options of its parent: then any value is ignored, valid or not (decisions.md), which a
 * client or a fuzzer can tell from the document.
 */
function withDisabling(schema: SchemaObject, definition: ParameterDefinition): SchemaObject {
  const ids = enablingIds(definition);
  if (ids === null || definition.parent === null) return schema;
  const extension: Record<string, unknown> = { 'x-disabled-unless': { [definition.parent]: ids } };
  return { ...schema, ...extension };
}

function queryParameters(
  definitions: ParameterDefinition[],
  builtIns: Record<string, SchemaObject>,
): ParameterObject[] {
  const own = definitions.map((definition): ParameterObject => {
    const schema = withDisabling(querySchemaOf(definition), definition);
    return {
      name: definition.name,
      in: 'query',
      required: false,
      description: describe(definition),
      schema,
      ...(schema.type === 'array' ? { explode: true } : {}),
    };
  });
  return [...own, ...builtInQuery(builtIns)];
}

function bodyOf(
  definitions: ParameterDefinition[],
  builtIns: Record<string, SchemaObject>,
  description: string,
): SchemaObject {
  const own = definitions.map((definition): [string, SchemaObject] => [
    definition.name,
    { ...withDisabling(bodySchemaOf(definition), definition), description: describe(definition) },
  ]);
  // A null value selects nothing: the same as leaving the key out (selection-request.ts).
  const nullable = (entries: [string, SchemaObject][]) =>
    entries.map(([name, schema]): [string, SchemaObject] => [name, { ...schema, nullable: true }]);
  return {
    type: 'object',
    description: `${description}; a null value is the same as leaving the key out`,
    properties: Object.fromEntries([...nullable(own), ...nullable(Object.entries(builtIns))]),
  };
}

function jsonBody(schema: Schema): OperationObject['requestBody'] {
  return { required: false, content: { 'application/json': { schema } } };
}

/** The errors of an item's endpoints: its scope decides whether a token or admin rights are needed. */
function itemErrors(scope: Scope, withBody: boolean, results = false): ResponsesObject {
  const statuses: ErrorStatus[] = [400, ...COMMON_ERRORS];
  // A caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
  if (results) statuses.push(406, 429);
  if (scope === 'private') statuses.push(403);
  if (withBody) statuses.push(...BODY_ERRORS);
  return errorResponses(
    'current',
    [...new Set(statuses)].sort((a, b) => a - b),
  );
}

function itemSecurity(scope: Scope) {
  const token = [{ bearer: [] }, { login: [] }];
  return scope === 'public' ? [...token, {}] : token;
}

export interface ItemDocs {
  paths: Record<string, PathItemObject>;
  schemas: Schemas;
}

/**
 * The parameters endpoint of a dataset or dashboard: selections in the query on GET or as JSON on POST,
 * answered with the item's parameters evaluated with them.
 */
function parametersPath(
  kind: 'dataset' | 'dashboard',
  item: { name: string; label: string; scope: Scope; parameters: string[] },
  definitions: ParameterDefinition[],
  common: Partial<OperationObject>,
  schema: ReferenceObject,
): PathItemObject {
  const refresh = builtInSchemas('parameters', { parameters: item.parameters });
  const responses = (get: boolean): ResponsesObject => ({
    '200': {
      description: `The parameters of ${item.label}, evaluated with the selections`,
      content: { 'application/json': { schema } },
    },
    ...itemErrors(item.scope, !get),
  });
  return {
    get: {
      ...common,
      summary: `Parameters of ${item.label}`,
      operationId: `${kind}_${item.name}_parameters`,
      parameters: queryParameters(definitions, refresh),
      responses: responses(true),
    },
    post: {
      ...common,
      summary: `Parameters of ${item.label}, selections as JSON`,
      operationId: `${kind}_${item.name}_parameters_post`,
      requestBody: jsonBody(bodyOf(definitions, refresh, 'Selections')),
      responses: responses(false),
    },
  };
}

/**
 * Paths and schemas for each dataset and dashboard of the project, with its own parameters: selections
 * and columns differ per item, so the generic `{dataset}` routes cannot describe them.
 */
export function projectItemDocs(project: Project, prefix: string, maxRows: number): ItemDocs {
  const byName = new Map(project.parameters.map((definition) => [definition.name, definition]));
  const definitionsOf = (names: string[]) =>
    names.flatMap((name) => {
      const definition = byName.get(name);
      return definition ? [definition] : [];
    });
  const paths: Record<string, PathItemObject> = {};
  let schemas: Schemas = {};

  for (const dataset of project.datasets) {
    const columns = findModel(project, dataset.model)?.columns ?? [];
    const definitions = definitionsOf(dataset.parameters);
    const name = (part: string) => schemaName('datasets', dataset.name, part);
    schemas = { ...schemas, ...datasetSchemas(dataset, columns) };
    const results = builtInSchemas('results', {
      maxRows,
      columns: columns.map((column) => column.name),
    });
    const common = {
      tags: ['datasets (this project)'],
      description: dataset.description,
      security: itemSecurity(dataset.scope),
    };
    const resultResponses = (get: boolean): ResponsesObject => ({
      '200': {
        description: `${dataset.label}. ${EXPORTS_DESCRIPTION}`,
        content: {
          'application/json': { schema: ref(name('Result')) },
          ...exportContent(),
        },
      },
      ...(get
        ? { '304': { description: 'Not modified: the `If-None-Match` copy is current' } }
        : {}),
      ...itemErrors(dataset.scope, !get, true),
    });
    paths[`/${prefix}/datasets/${dataset.name}/results`] = {
      get: {
        ...common,
        summary: `${dataset.label} (${dataset.scope})`,
        operationId: `dataset_${dataset.name}_results`,
        parameters: queryParameters(definitions, results),
        responses: resultResponses(true),
      },
      post: {
        ...common,
        summary: `${dataset.label} (${dataset.scope}), selections as JSON`,
        operationId: `dataset_${dataset.name}_results_post`,
        requestBody: jsonBody(bodyOf(definitions, results, 'Selections and x_ built-ins')),
        responses: resultResponses(false),
      },
    };
    paths[`/${prefix}/datasets/${dataset.name}/parameters`] = parametersPath(
      'dataset',
      dataset,
      definitions,
      common,
      ref(name('Parameters')),
    );
  }

  for (const dashboard of project.dashboards) {
    const definitions = definitionsOf(dashboard.parameters);
    const verify = builtInSchemas('dashboardResults');
    const common = {
      tags: ['dashboards (this project)'],
      description: dashboard.description,
      security: itemSecurity(dashboard.scope),
    };
    const mediaType = dashboard.format === 'png' ? 'image/png' : 'text/html';
    const resultResponses = (get: boolean): ResponsesObject => ({
      '200': {
        description: `The dashboard as ${dashboard.format.toUpperCase()}`,
        content: {
          [mediaType]: {
            schema:
              dashboard.format === 'png'
                ? { type: 'string', format: 'binary' }
                : { type: 'string' },
          },
        },
      },
      ...(get
        ? { '304': { description: 'Not modified: the `If-None-Match` copy is current' } }
        : {}),
      ...itemErrors(dashboard.scope, !get, true),
    });
    paths[`/${prefix}/dashboards/${dashboard.name}/results`] = {
      get: {
        ...common,
        summary: `${dashboard.label} (${dashboard.scope}, ${dashboard.format})`,
        operationId: `dashboard_${dashboard.name}_results`,
        parameters: queryParameters(definitions, verify),
        responses: resultResponses(true),
      },
      post: {
        ...common,
        summary: `${dashboard.label} (${dashboard.scope}, ${dashboard.format}), selections as JSON`,
        operationId: `dashboard_${dashboard.name}_results_post`,
        requestBody: jsonBody(bodyOf(definitions, verify, 'Selections')),
        responses: resultResponses(false),
      },
    };
    paths[`/${prefix}/dashboards/${dashboard.name}/parameters`] = parametersPath(
      'dashboard',
      dashboard,
      definitions,
      common,
      ref('ParametersResponse'),
    );
  }
  return { paths, schemas };
}
