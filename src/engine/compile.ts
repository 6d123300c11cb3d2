import { NotFoundError } from '@/core/errors';
import { ComposedQuery, composeModel, RequestValues } from '@/engine/query/model-sql';
import { findDataset, Project } from '@/core/project/project';

/** A dataset's statement as `compile` shows it: each model's SQL and the bound values, numbered. */
export interface CompiledDataset extends ComposedQuery {
  dataset: string;
  model: string;
}

/** The statement a dataset runs for these selections, without running it (no database needed). */
export function compileDataset(
  project: Project,
  name: string,
  request: RequestValues,
): CompiledDataset {
  const model = datasetModel(project, name);
  return { dataset: name, model, ...composeModel(project, model, request) };
}

/** The model a dataset runs; a 404 for a dataset the project does not have. */
export function datasetModel(project: Project, name: string): string {
  const dataset = findDataset(project, name);
  if (!dataset) throw new NotFoundError(`No dataset named "${name}"`);
  return dataset.model;
}
