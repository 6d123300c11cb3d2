import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildError, BuildInterruptedError } from '@/engine/materialize/materialize-environment';
import { cliBuildId } from '@/engine/process/leftovers';
import { throwIfProblems } from '@/engine/check/check-models';
import { ProjectError, ProjectProblem } from '@/core/project-errors';
import { readProject } from '@/core/project/project-loader';
import { checkableProject } from '@/core/project/checkable-project';
import { compileDataset, CompiledDataset } from '@/engine/compile';
import type { Env } from '@/engine/connections/connection-registry';
import type { EngineLimits } from '@/engine/duckdb/duckdb-instance';
import { Engine } from '@/engine/engine';
import { describeBound } from '@/engine/sql/bound-value';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import {
  buildCatalog,
  ParameterQueryError,
  parameterQueries,
} from '@/core/parameters/resolve-parameters';
import type { CallerView } from '@/core/parameters/selection-value';
import { DatasetSpec, findDataset, Project } from '@/core/project/project';
import type { UserField } from '@/core/user-fields';
import type { CliArgs } from '@/cli/cli-args';
import type { Output } from '@/cli/cli-output';
import { requestFromCli } from '@/cli/cli-selections';
import { DashboardPages } from '@/dashboards/template/dashboard-pages';

/** What the commands open the engine with: `DATA_DIR`, the environment, the `ENGINE_*` limits. */
export interface EngineSetup {
  dataDir: string;
  env: Env;
  limits: EngineLimits;
}

/** `[#######-------]  3/7  seed expenses  1.2 s` */
function progressBar(done: number, total: number, what: string, seconds: number): string {
  const width = 24;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}  ${what}  ${seconds.toFixed(1)} s`;
}

/**
 * Builds the project in a scratch folder (its seeds, sources and build models, as a build does) and plans
 * every runtime and dbview model on it (default selections, then each option of each select parameter):
 * every problem at once, with its file, line and column, thrown as the loader's `ProjectError`; nothing is
 * kept.
 */
export async function checkSql(project: Project, env: Env, limits: EngineLimits): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'drey-validate-'));
  const engine = new Engine(project, { dataDir: scratch, env, limits });
  // Ctrl-C or SIGTERM stops the check as it stops a build, and the scratch folder goes with it.
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals) => abort.abort(signal);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await engine.open();
    await engine.build('validate', {
      signal: abort.signal,
      beforeSwitch: async (built) => {
        const catalog = await buildCatalog(project, (sql) => built.query(sql));
        throwIfProblems(await built.checkModels(catalog));
      },
    });
  } catch (error) {
    if (error instanceof BuildInterruptedError) {
      const signal = error.reason as NodeJS.Signals;
      throw new InterruptedError(
        signal,
        `Interrupted by ${signal}: the check stopped and its scratch folder was removed.`,
      );
    }
    // A build step's failure names its model and file already; the checks' problems are a ProjectError.
    const cause =
      error instanceof BuildError && error.cause instanceof ProjectError ? error.cause : error;
    throw cause;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Problems as lines under a heading, each as the loader prints it. */
function problemLines(problems: readonly ProjectProblem[], indent: string): string[] {
  return new ProjectError([...problems]).message
    .split('\n')
    .slice(1)
    .map((line) => `${indent}${line}`);
}

/**
 * The report of a project with problems: in one group when they are of one kind (the loader's own
 * message), else its files' problems, then its SQL's (planned on the models those leave whole), then the
 * models left out of the SQL check.
 */
export function validationReport(
  fileProblems: readonly ProjectProblem[],
  sqlProblems: readonly ProjectProblem[],
  unchecked: readonly string[],
  note?: string,
): string {
  const count = fileProblems.length + sqlProblems.length;
  const lines = [`The project is invalid (${count} problem${count === 1 ? '' : 's'}):`];
  if (fileProblems.length === 0 || sqlProblems.length === 0) {
    lines.push(...problemLines([...fileProblems, ...sqlProblems], ''));
  } else {
    lines.push(`  in its files (${fileProblems.length}):`, ...problemLines(fileProblems, '  '));
    lines.push(`  in its SQL (${sqlProblems.length}):`, ...problemLines(sqlProblems, '  '));
  }
  if (unchecked.length > 0) {
    lines.push(`  SQL not checked because of the problems above: ${unchecked.join(', ')}`);
  }
  if (note) lines.push(`  ${note}`);
  return lines.join('\n');
}

/** Said when a parameter's query failed: the models' SQL is planned with the parameters' options. */
const MODELS_UNCHECKED =
  "The models' SQL was not checked: it is planned with the parameters' options, whose queries must run first";

/** The problems of planning the SQL of `project`, and what was not checked: none when it checks out. */
async function sqlProblemsOf(
  project: Project,
  options: Pick<EngineSetup, 'env' | 'limits'>,
): Promise<{ problems: ProjectProblem[]; note?: string }> {
  try {
    await checkSql(project, options.env, options.limits);
    return { problems: [] };
  } catch (error) {
    if (error instanceof ParameterQueryError) {
      return { problems: error.problems, note: MODELS_UNCHECKED };
    }
    if (error instanceof ProjectError) return { problems: error.problems };
    // A build step's failure stops the check before the runtime models: reported as the build says it
    // (its message names the model and its file).
    if (error instanceof BuildError) {
      return { problems: [{ file: 'the build', path: '', message: error.message }] };
    }
    throw error;
  }
}

/**
 * `validate`: every problem of the project folder in one run. When its files have problems, the SQL of
 * the models they leave whole is checked too (see {@link checkableProject}); the report groups both.
 */
export async function validate(
  dir: string,
  options: Pick<EngineSetup, 'env' | 'limits'>,
  output: Output,
): Promise<void> {
  const reading = readProject(dir);
  if (!reading.project) {
    throw new Error(
      `${validationReport(reading.problems, [], [])}\n  SQL not checked: project.yml must read first`,
    );
  }
  // The dashboards' templates are compiled as the service compiles them when it starts: a template that
  // does not compile or reads no dataset of that name is a problem of the project's files.
  const fileProblems = [
    ...reading.problems,
    ...templateProblems(reading.project, reading.unreadDatasets ?? []),
  ];
  if (fileProblems.length > 0) {
    const { project, leftOut } = checkableProject(
      reading.project,
      fileProblems,
      reading.declaredParameters,
    );
    const sql = await sqlProblemsOf(project, options);
    throw new Error(
      validationReport(
        fileProblems,
        sql.problems,
        [...(reading.unreadSql ?? []), ...leftOut],
        sql.note,
      ),
    );
  }
  const project = reading.project;
  // Its SQL's problems alone, or a build step's failure (a connection's variable unset, say), as they are.
  try {
    await checkSql(project, options.env, options.limits);
  } catch (error) {
    if (!(error instanceof ParameterQueryError)) throw error;
    throw new Error(validationReport([], error.problems, [], MODELS_UNCHECKED), { cause: error });
  }
  const kinds = new Map<string, number>();
  for (const model of project.models) kinds.set(model.kind, (kinds.get(model.kind) ?? 0) + 1);
  const models = [...kinds].map(([kind, count]) => `${count} ${kind}`).join(', ');
  output.out(`Project "${project.name}" (${project.dir}) is valid:`);
  output.out(`  ${project.models.length} models (${models || 'none'})`);
  output.out(
    `  ${project.parameterDefinitions.length} parameters, ${project.datasets.length} datasets, ` +
      `${project.dashboards.length} dashboards, ${project.connections.length} connections`,
  );
}

/**
 * The problems of the dashboards' templates; not that one reads a dataset in `unread` (its model's .yml
 * does not parse, a problem reported already).
 */
function templateProblems(project: Project, unread: readonly string[]): ProjectProblem[] {
  try {
    new DashboardPages(project);
    return [];
  } catch (error) {
    if (error instanceof ProjectError) {
      return error.problems.filter(
        (problem) => !unread.some((name) => problem.message.startsWith(`dataset('${name}')`)),
      );
    }
    throw error;
  }
}

/** A command stopped by a signal: the CLI exits with 128 + the signal's number, as shells expect. */
export class InterruptedError extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    message: string,
  ) {
    super(message);
  }

  get exitCode(): number {
    return 128 + (constants.signals[this.signal] ?? 0);
  }
}

export async function build(project: Project, options: EngineSetup, output: Output): Promise<void> {
  const engine = new Engine(project, options);
  // Ctrl-C or SIGTERM interrupts the build, which removes its partial files; a second Ctrl-C, the
  // handlers gone, stops the process at once.
  const abort = new AbortController();
  const stop = (signal: NodeJS.Signals) => abort.abort(signal);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The file names this process: a later build removes it if this one is killed (SIGKILL) mid-write.
  const buildId = cliBuildId(process.pid, new Date());
  try {
    await engine.open();
    const started = Date.now();
    const result = await engine.build(buildId, {
      signal: abort.signal,
      beforeSwitch: async (built) => {
        const catalog = await buildCatalog(project, (sql) => built.query(sql));
        throwIfProblems(await built.checkModels(catalog));
      },
      onProgress: (step) => {
        const seconds = (Date.now() - started) / 1000;
        if (output.status) {
          const done = step.status === 'done' ? step.step : step.step - 1;
          output.status(progressBar(done, step.steps, `${step.kind} ${step.model}`, seconds));
        } else if (step.status === 'done') {
          output.out(
            `[${step.step}/${step.steps}] ${step.kind} ${step.model}: ${step.rows} rows in ${step.durationMs} ms`,
          );
        }
      },
    });
    output.status?.('');
    for (const model of result.models) {
      if (output.status) {
        output.out(
          `  ${model.kind} ${model.model}: ${model.rows} rows in ${Math.round(model.durationMs)} ms`,
        );
      }
    }
    output.out(
      `Built ${result.file} in ${result.durationMs} ms; it is now the current environment.`,
    );
  } catch (error) {
    if (error instanceof BuildInterruptedError) {
      output.status?.('');
      const signal = error.reason as NodeJS.Signals;
      throw new InterruptedError(
        signal,
        `Interrupted by ${signal}: build ${buildId} stopped and its partial files were removed; the ` +
          'current environment is unchanged.',
      );
    }
    throw error;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await engine.close();
  }
}

function userFieldValue(field: UserField, text: string): string | number | boolean {
  switch (field.type) {
    case 'integer':
    case 'number':
      return Number(text);
    case 'boolean':
      return text === 'true';
    case 'string':
      return text;
  }
}

/** The caller `compile` renders for: anonymous unless --user, with the fields' defaults. */
export function callerFrom(project: Project, args: CliArgs): CallerView {
  if (args.user === null) return { username: null, isAdmin: false, fields: {} };
  const fields: CallerView['fields'] = {};
  for (const field of project.userFields) {
    const given = args.userFields[field.name];
    fields[field.name] =
      given !== undefined ? userFieldValue(field, given) : (field.default ?? null);
  }
  return { username: args.user, isAdmin: args.admin, fields };
}

export function formatCompiled(compiled: CompiledDataset): string[] {
  const where =
    compiled.target.kind === 'duckdb'
      ? 'the DuckDB environment'
      : `connection "${compiled.target.connection}"`;
  const lines = [`-- dataset ${compiled.dataset}: model ${compiled.model}, runs on ${where}`];
  for (const part of compiled.parts) {
    lines.push('', `-- model ${part.model} (${part.kind})`, part.sql);
  }
  if (compiled.parts.length !== 1) lines.push('', '-- the statement that runs', compiled.sql);
  lines.push('', '-- bound values');
  if (compiled.binds.length === 0) lines.push('(none)');
  compiled.binds.forEach((bind, index) => lines.push(`$${index + 1} = ${describeBound(bind)}`));
  return lines;
}

/**
 * The catalog `compile` validates with: as the service's, on the current environment when the project's
 * parameters take options or bounds from queries (then it must have been built).
 */
async function catalogOf(project: Project, options: EngineSetup): Promise<ParameterCatalog> {
  if (parameterQueries(project.parameters).length === 0) {
    return buildCatalog(project, () => Promise.resolve([]));
  }
  const engine = new Engine(project, options);
  try {
    if (!(await engine.open())) {
      throw new Error(
        `the parameters take options or bounds from the built tables, and ${noBuild(engine, options)}`,
      );
    }
    return await buildCatalog(project, (sql) => engine.queryBuilt(sql));
  } finally {
    await engine.close();
  }
}

/** Why `engine` has nothing to run on, and what to do. */
export function noBuild(engine: Engine, options: EngineSetup): string {
  const foreign = engine.environments.foreign;
  if (!foreign) {
    return `${options.dataDir} has no built environment yet: run \`npm run drey -- build\` first`;
  }
  return (
    `${options.dataDir} has no build of ${engine.environments.identity}: its current build ` +
    `${foreign.buildId} is of ${foreign.identity ?? 'a project an earlier version did not record'}. ` +
    `Run \`npm run drey -- build --project ${engine.project.dir}\` first, or use that project's own DATA_DIR`
  );
}

export function datasetOf(project: Project, name: string): DatasetSpec {
  const dataset = findDataset(project, name);
  if (!dataset) {
    throw new Error(
      `no dataset named "${name}" (datasets: ${project.datasets.map((d) => d.name).join(', ')})`,
    );
  }
  return dataset;
}

export async function compile(
  project: Project,
  args: CliArgs,
  options: EngineSetup,
  output: Output,
): Promise<void> {
  const name = args.dataset ?? '';
  const dataset = datasetOf(project, name);
  const caller = callerFrom(project, args);
  const request = requestFromCli(project, dataset.parameters, args.params);
  const catalog = await catalogOf(project, options);
  const selections = catalog.selections(dataset.parameters, request, caller);
  const compiled = compileDataset(project, dataset, { selections, caller });
  formatCompiled(compiled).forEach((line) => output.out(line));
}
