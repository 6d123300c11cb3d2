import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseQuerySelections } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { ProjectError, ProjectProblem } from '@/core/project-errors';
import { ColumnType, findModel, Model, Project } from '@/core/project/project';
import {
  parseEngineError,
  sourcePosition,
  statementStart,
} from '@/engine/check/engine-error-position';
import type { BoundValue } from '@/engine/sql/bound-value';
import { quoteIdentifier } from '@/engine/sql/sql-text';
import { composeModel, ComposedQuery, RequestValues } from '@/engine/query/model-sql';

/** A column of a planned statement: the schema type clients receive, and the database's own type. */
export interface PlannedColumn {
  name: string;
  type: ColumnType;
  databaseType: string;
}

/** Asks an engine to plan a statement without running it; rejects with the engine's error. */
export interface Planner {
  /** DuckDB, on the environment (or a scratch copy of its tables): a prepared statement, its columns. */
  duckdb(sql: string): Promise<readonly PlannedColumn[] | void>;
  /** An external connection (dbview models): `EXPLAIN` with the bound values. */
  connection(name: string, sql: string, binds: BoundValue[]): Promise<void>;
}

/**
 * The callers a check renders for: anonymous with the user fields' defaults, then an administrator with
 * each value of each enumerated user field (a model or an option may depend on them).
 */
function checkCallers(project: Project): CallerView[] {
  const fields: CallerView['fields'] = {};
  for (const field of project.userFields) fields[field.name] = field.default ?? null;
  const callers: CallerView[] = [
    { username: null, isAdmin: false, fields },
    { username: 'drey-check', isAdmin: true, fields },
  ];
  for (const field of project.userFields) {
    for (const value of field.enum ?? []) {
      if (value === fields[field.name]) continue;
      callers.push({
        username: 'drey-check',
        isAdmin: true,
        fields: { ...fields, [field.name]: value },
      });
    }
  }
  return callers;
}

/**
 * Requests to render with: the defaults, then each option of each single select and all options of each
 * multi select (an option's custom fields and an `if` on a selection change the SQL a model renders).
 */
function requestVariants(catalog: ParameterCatalog): Record<string, string[]>[] {
  const variants: Record<string, string[]>[] = [{}];
  for (const name of catalog.names()) {
    const definition = catalog.definition(name);
    if (definition?.kind !== 'select' || definition.options.length === 0) continue;
    const ids = definition.options.map((option) => option.id);
    if (definition.widget === 'multi_select') variants.push({ [name]: ids });
    else ids.forEach((id) => variants.push({ [name]: [id] }));
  }
  return variants;
}

/** Each caller with each variant the catalog accepts for them (an option limited to some users is not). */
function requestsToCheck(project: Project, catalog: ParameterCatalog): RequestValues[] {
  const names = project.parameters.map((parameter) => parameter.name);
  const requests: RequestValues[] = [];
  for (const caller of checkCallers(project)) {
    for (const variant of requestVariants(catalog)) {
      try {
        requests.push({
          selections: catalog.selections(names, parseQuerySelections(variant), caller),
          caller,
        });
      } catch {
        // Not a selection this caller can make (or the defaults themselves are refused): nothing to plan.
      }
    }
  }
  return requests;
}

/**
 * Renders every runtime and dbview model for the default selections of every parameter, then for each option
 * of each select parameter (and for an administrator with each value of each enumerated user field), and
 * asks the engine to plan it, without running it: an unknown column, table or function, or a syntax error,
 * is a problem naming the model's file, the line and column in it (when the rendered line is found in the
 * template; else the line where the model's statement starts) and the engine's message. Every problem is returned, not only the first. (Build models are planned when they
 * are built; seeds have no SQL.)
 */
export async function checkModels(
  project: Project,
  catalog: ParameterCatalog,
  planner: Planner,
): Promise<ProjectProblem[]> {
  const requests = requestsToCheck(project, catalog);
  const problems: ProjectProblem[] = [];
  const seen = new Set<string>();
  for (const model of project.models) {
    if (model.kind === 'build') {
      // Its table is built: its columns are what the datasets reading it straight receive.
      const columns = await planner
        .duckdb(`SELECT * FROM ${quoteIdentifier(model.name)}`)
        .catch(() => undefined);
      if (columns) problems.push(...typeProblems(model, columns));
      continue;
    }
    if (model.kind !== 'runtime' && model.kind !== 'dbview') continue;
    const planned = new Set<string>();
    const typed = new Set<string>();
    for (const request of requests) {
      let composed: ComposedQuery;
      try {
        composed = composeModel(project, model.name, request);
      } catch (error) {
        problems.push({ file: model.sqlFile, path: '', message: messageOf(error) });
        break;
      }
      // Most variants render the same statement: each one is planned once.
      if (planned.has(composed.sql)) continue;
      planned.add(composed.sql);
      try {
        if (composed.target.kind === 'connection') {
          await planner.connection(composed.target.connection, composed.sql, composed.binds);
        } else {
          const columns = await planner.duckdb(composed.sql);
          // A column of another type in another variant is a problem of its own, told once.
          for (const problem of columns ? typeProblems(model, columns) : []) {
            if (!typed.has(problem.message)) problems.push(problem);
            typed.add(problem.message);
          }
        }
      } catch (error) {
        const problem = locate(project, composed, messageOf(error), model);
        const key = `${problem.file}|${problem.path}|${problem.message}`;
        // A model read by others fails in their statements too: reported once, at its own file.
        if (!seen.has(key)) problems.push(problem);
        seen.add(key);
        // One problem of a model at a time: the variants after it mostly repeat it.
        break;
      }
    }
  }
  return problems;
}

/**
 * The declared column types (`columns:` of the model's `.yml`) that its planned statement contradicts:
 * the type clients receive comes from the query (docs/project-format.md, "Types: what clients receive"),
 * while the OpenAPI document and the typed client describe the declared one, so a column declared
 * `decimal` over a DOUBLE would be documented as exact and served as `number`. A declared column the
 * statement lacks is left alone (it may depend on a selection: its `condition`).
 */
function typeProblems(model: Model, columns: readonly PlannedColumn[]): ProjectProblem[] {
  const problems: ProjectProblem[] = [];
  model.columns.forEach((declared, index) => {
    const planned = columns.find((column) => column.name === declared.name);
    if (!declared.type || !planned || planned.type === declared.type) return;
    const fix =
      declared.type === 'decimal'
        ? `cast it in the SQL (CAST(... AS ${declared.databaseType ?? 'DECIMAL(18,3)'}))`
        : `cast it in the SQL to a type served as ${declared.type}`;
    problems.push({
      file: model.metadataFile ?? ('sqlFile' in model ? (model.sqlFile ?? model.name) : model.name),
      path: `columns[${index}].type`,
      message:
        `is ${declared.type}, but the query gives ${planned.databaseType}, which clients receive as ` +
        `${planned.type}: declare it ${planned.type}, or ${fix}`,
    });
  });
  return problems;
}

/** The problem an engine error is, placed in the file of the model whose part of the statement it names. */
function locate(
  project: Project,
  composed: ComposedQuery,
  error: string,
  main: { sqlFile: string; sql: string },
): ProjectProblem {
  const parsed = parseEngineError(error, composed.sql);
  const { message } = parsed;
  let { line, column } = parsed;
  // The parser says where only in words when the statement stops too early: at its end.
  if (line === undefined && /at end of input/.test(message)) {
    const lines = composed.sql.split('\n');
    line = lines.length;
    column = lines[lines.length - 1].length + 1;
  }
  const unplaced = { file: main.sqlFile, path: `line ${statementStart(main.sql)}`, message };
  if (line === undefined) return unplaced;
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
      path: place
        ? `line ${place.line}, column ${place.column}`
        : `line ${statementStart(model.sql)}`,
      message,
    };
  }
  return unplaced;
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
