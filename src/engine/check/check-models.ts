import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseQuerySelections } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { ProjectError, ProjectProblem } from '@/core/project/project-errors';
import { findModel, Project } from '@/core/project/project';
import { parseEngineError, sourcePosition } from '@/engine/check/engine-error-position';
import type { BoundValue } from '@/engine/templating/bound-value';
import { composeModel, ComposedQuery } from '@/engine/query/model-sql';

/** Asks an engine to plan a statement without running it; rejects with the engine's error. */
export interface Planner {
  /** DuckDB, on the environment (or a scratch copy of its tables): a prepared statement. */
  duckdb(sql: string): Promise<void>;
  /** An external connection (dbview models): `EXPLAIN` with the bound values. */
  connection(name: string, sql: string, binds: BoundValue[]): Promise<void>;
}

/** The caller a check renders for: anonymous, with the user fields' defaults. */
function checkCaller(project: Project): CallerView {
  const fields: CallerView['fields'] = {};
  for (const field of project.userFields) fields[field.name] = field.default ?? null;
  return { username: null, isAdmin: false, fields };
}

/**
 * Renders every runtime and dbview model for the default selections of every parameter and asks the engine
 * to plan it, without running it: an unknown column, table or function, or a syntax error, is a problem
 * naming the model's file, the line and column in it (when the rendered line is found in the template) and
 * the engine's message. Every problem is returned, not only the first. (Build models are planned when they
 * are built; seeds have no SQL.)
 */
export async function checkModels(
  project: Project,
  catalog: ParameterCatalog,
  planner: Planner,
): Promise<ProjectProblem[]> {
  const caller = checkCaller(project);
  const selections = catalog.selections(
    project.parameters.map((parameter) => parameter.name),
    parseQuerySelections({}),
    caller,
  );
  const problems: ProjectProblem[] = [];
  const seen = new Set<string>();
  for (const model of project.models) {
    if (model.kind !== 'runtime' && model.kind !== 'dbview') continue;
    let composed: ComposedQuery;
    try {
      composed = composeModel(project, model.name, { selections, caller });
    } catch (error) {
      problems.push({ file: model.sqlFile, path: '', message: messageOf(error) });
      continue;
    }
    try {
      if (composed.target.kind === 'connection') {
        await planner.connection(composed.target.connection, composed.sql, composed.binds);
      } else {
        await planner.duckdb(composed.sql);
      }
    } catch (error) {
      const problem = locate(project, composed, messageOf(error), model.sqlFile);
      const key = `${problem.file}|${problem.path}|${problem.message}`;
      // A model read by others fails in their statements too: reported once, at its own file.
      if (!seen.has(key)) problems.push(problem);
      seen.add(key);
    }
  }
  return problems;
}

/** The problem an engine error is, placed in the file of the model whose part of the statement it names. */
function locate(
  project: Project,
  composed: ComposedQuery,
  error: string,
  fallbackFile: string,
): ProjectProblem {
  const { message, line, column } = parseEngineError(error, composed.sql);
  if (line === undefined) return { file: fallbackFile, path: '', message };
  // The statement is the parts (the models it reads, as CTEs, then the model itself) as rendered.
  for (const part of composed.parts) {
    const start = composed.sql.indexOf(part.sql);
    if (start < 0) continue;
    const first = composed.sql.slice(0, start).split('\n').length;
    const last = first + part.sql.split('\n').length - 1;
    if (line < first || line > last) continue;
    const model = findModel(project, part.model);
    if (!model || !('sqlFile' in model) || !model.sqlFile || !('sql' in model) || !model.sql) break;
    const place =
      column === undefined
        ? undefined
        : sourcePosition(part.sql, line - first + 1, column, model.sql);
    return {
      file: model.sqlFile,
      path: place ? `line ${place.line}, column ${place.column}` : '',
      message,
    };
  }
  return { file: fallbackFile, path: '', message };
}

function messageOf(error: unknown): string {
  // Not `instanceof Error`: the native driver's errors may come from another realm (a test runner's).
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/** Problems as the error the loader throws, so that every caller prints them alike. */
export function throwIfProblems(problems: ProjectProblem[]): void {
  if (problems.length > 0) throw new ProjectError(problems);
}
