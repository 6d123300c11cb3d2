import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { parameterQueries } from '@/core/parameters/resolve-parameters';
import type { Model, Project } from '@/core/project/project';
import type { ProjectProblem } from '@/core/project-errors';
import { findParams, findRefs } from '@/core/project/sql-template-check';

/** The part of a project whose SQL can be checked although other parts have problems. */
export interface CheckableProject {
  project: Project;
  /** The SQL files of the models left out: their SQL would only repeat the problems found. */
  leftOut: string[];
}

function filesOf(model: Model): string[] {
  return [
    model.metadataFile,
    'sqlFile' in model ? model.sqlFile : undefined,
    'csvFile' in model ? model.csvFile : undefined,
  ].filter((file): file is string => file !== undefined);
}

function refsOf(sql: string | undefined): string[] {
  return sql ? findRefs(sql).refs.map((ref) => ref.name) : [];
}

function sqlOf(model: Model): string | undefined {
  return 'sql' in model ? model.sql : undefined;
}

/**
 * `project` (assembled from what loaded) without what its `problems` touch: a model whose own files have
 * a problem, a parameter that did not parse (`declared` names every parameter written in project.yml),
 * and, until nothing changes, whatever reads one of those: a model that refs a model left out or reads a
 * parameter left out, a parameter whose query refs a model left out or whose parent is left out. What
 * remains renders as it will once the problems are fixed, so an engine's error in it is a problem of its
 * own, reported in the same run as the others.
 */
export function checkableProject(
  project: Project,
  problems: readonly ProjectProblem[],
  declared: readonly string[],
): CheckableProject {
  const touched = new Set(problems.map((problem) => problem.file));
  let models = project.models.filter((model) => !filesOf(model).some((file) => touched.has(file)));
  // A parameter with a problem of its own (its query refs a runtime model, say) is left out like a model.
  let parameters: ParameterDefinition[] = project.parameters.filter(
    (parameter) =>
      !problems.some(
        (problem) =>
          problem.file === project.manifestFile && problem.path.startsWith(`${parameter.at}.`),
      ),
  );
  for (;;) {
    const modelNames = new Set(models.map((model) => model.name));
    const queries = new Map(parameterQueries(parameters).map((q) => [q.parameter, q.sql]));
    const parameterNames = new Set(parameters.map((parameter) => parameter.name));
    const keptParameters = parameters.filter(
      (parameter) =>
        refsOf(queries.get(parameter.name)).every((name) => modelNames.has(name)) &&
        (parameter.parent === null || parameterNames.has(parameter.parent)),
    );
    const keptNames = new Set(keptParameters.map((parameter) => parameter.name));
    const keptModels = models.filter((model) => {
      const sql = sqlOf(model);
      if (!refsOf(sql).every((name) => modelNames.has(name))) return false;
      // A parameter that is not declared at all is the model's own mistake: rendering reports it.
      const reads = sql ? findParams(sql).map((read) => read.name) : [];
      return reads.every((name) => keptNames.has(name) || !declared.includes(name));
    });
    const stable =
      keptModels.length === models.length && keptParameters.length === parameters.length;
    models = keptModels;
    parameters = keptParameters;
    if (stable) break;
  }
  const kept = new Set(models);
  // Named by their SQL file: a seed has no SQL to leave unchecked.
  const leftOut = project.models
    .filter((model) => !kept.has(model))
    .flatMap((model) => filesOf(model).filter((file) => file.endsWith('.sql')));
  return {
    project: {
      ...project,
      models,
      parameters,
      datasets: project.datasets.filter((dataset) => models.some((m) => m.name === dataset.model)),
    },
    leftOut,
  };
}
