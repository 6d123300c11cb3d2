import { NotFoundError } from '@/core/errors';
import { ComposedQuery, composeModel, RequestValues } from '@/engine/query/model-sql';
import { DatasetSpec, findDataset, Project } from '@/core/project/project';

/**
 * A dataset's statement for one request's selections and caller: each model's SQL and the bound values,
 * numbered, as `compile` shows them. The engine runs, counts, pages and streams it as it is, so a request
 * that needs several of those renders its templates once.
 */
export interface CompiledDataset extends ComposedQuery {
  dataset: string;
  model: string;
}

/**
 * The statement a dataset runs for these selections, without running it (no database needed). `dataset` is
 * a name, looked up in `project` (a 404 when it has none), or the spec a caller has already resolved.
 */
export function compileDataset(
  project: Project,
  dataset: DatasetSpec | string,
  request: RequestValues,
): CompiledDataset {
  const spec = typeof dataset === 'string' ? findDatasetOr404(project, dataset) : dataset;
  return { dataset: spec.name, model: spec.model, ...composeModel(project, spec.model, request) };
}

/** The model a dataset runs; a 404 for a dataset the project does not have. */
export function datasetModel(project: Project, dataset: DatasetSpec | string): string {
  return typeof dataset === 'string' ? findDatasetOr404(project, dataset).model : dataset.model;
}

function findDatasetOr404(project: Project, name: string): DatasetSpec {
  const dataset = findDataset(project, name);
  if (!dataset) throw new NotFoundError(`No dataset named "${name}"`);
  return dataset;
}
