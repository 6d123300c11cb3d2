import { DatasetCallError, DatasetCall } from '@/dashboards/template/dataset-passes';
import type { TemplateDataset } from '@/dashboards/template/helper-input';
import { QueryResult, rowObjects } from '@/engine/sql/query-result';
import type { ParameterRequest, RawSelection } from '@/core/parameters/selection-request';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';

/** The dataset a template's `dataset()` call names; the template is wrong if there is none. */
export function calledDataset(project: Project, call: DatasetCall): DatasetSpec {
  const dataset = project.datasets.find((candidate) => candidate.name === call.dataset);
  if (!dataset) throw new DatasetCallError(`dataset("${call.dataset}"): no such dataset`);
  return dataset;
}

/**
 * The request a dataset read by a dashboard runs with: the dashboard's own selections that the dataset
 * also takes, overridden by the selections the template fixes. Selections of parameters the dashboard does
 * not declare are not passed on: the dashboard's parameters are its whole interface. A fixed `null`
 * removes the request's selection, so the parameter's default applies.
 */
export function datasetRequest(
  dashboard: DashboardSpec,
  dataset: DatasetSpec,
  request: ParameterRequest,
  fixed: Record<string, unknown>,
): ParameterRequest {
  const takes = new Set(dataset.parameters);
  const unknown = Object.keys(fixed).filter((name) => !takes.has(name));
  if (unknown.length > 0) {
    throw new DatasetCallError(
      `dataset("${dataset.name}"): it takes no parameter ${unknown.map((n) => `"${n}"`).join(', ')}` +
        ` (it takes ${dataset.parameters.join(', ') || 'none'})`,
    );
  }
  const selections = new Map<string, RawSelection>();
  for (const name of dataset.parameters) {
    if (name in fixed) {
      if (fixed[name] !== null) selections.set(name, { source: 'body', value: fixed[name] });
      continue;
    }
    const given = request.selections.get(name);
    if (given && dashboard.parameters.includes(name)) selections.set(name, given);
  }
  return {
    forms: request.forms,
    selections,
    verifyParams: false,
    parentParam: null,
    builtins: {},
  };
}

/** A result as templates read it: rows as objects, column names and types. */
export function templateDataset(result: QueryResult): TemplateDataset {
  return {
    rows: rowObjects(result),
    columns: result.columns.map(({ name, type }) => ({ name, type })),
    truncated: result.truncated,
  };
}
