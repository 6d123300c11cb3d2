import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliArgs } from '@/cli/cli-args';
import { BuildError } from '@/engine/build/build-runner';
import { throwIfProblems } from '@/engine/check/check-models';
import { ProjectError } from '@/core/project/project-errors';
import { requestFromCli } from '@/cli/cli-selections';
import { compileDataset, CompiledDataset } from '@/engine/compile';
import type { Env } from '@/engine/connections/connection-registry';
import type { EngineLimits } from '@/engine/duckdb/duckdb-instance';
import { Engine } from '@/engine/engine';
import { describeBound } from '@/engine/templating/bound-value';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { buildCatalog, parameterQueries } from '@/core/parameters/resolve-parameters';
import type { CallerView } from '@/core/parameters/selection-value';
import { DatasetSpec, findDataset, Project } from '@/core/project/project';
import { formatRows } from '@/cli/row-formats';
import type { UserField } from '@/core/project/user-fields';

/** What the commands open the engine with: `DATA_DIR`, the environment, the `ENGINE_*` limits. */
export interface EngineSetup {
  dataDir: string;
  env: Env;
  limits: EngineLimits;
}

export interface Output {
  out(line: string): void;
  /** On a terminal: redraws one status line in place (a progress bar); absent otherwise. */
  status?(line: string): void;
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
  try {
    await engine.open();
    await engine.build('validate', {
      beforeSwitch: async (built) => {
        const catalog = await buildCatalog(project, (sql) => built.query(sql));
        throwIfProblems(await built.checkModels(catalog));
      },
    });
  } catch (error) {
    // A build step's failure names its model and file already; the checks' problems are a ProjectError.
    const cause =
      error instanceof BuildError && error.cause instanceof ProjectError ? error.cause : error;
    throw cause;
  } finally {
    await engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function validate(
  project: Project,
  options: EngineSetup,
  output: Output,
): Promise<void> {
  await checkSql(project, options.env, options.limits);
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

export async function build(project: Project, options: EngineSetup, output: Output): Promise<void> {
  const engine = new Engine(project, options);
  try {
    await engine.open();
    const buildId = `cli-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const started = Date.now();
    const result = await engine.build(buildId, {
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
  } finally {
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
function noBuild(engine: Engine, options: EngineSetup): string {
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

function datasetOf(project: Project, name: string): DatasetSpec {
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
  const compiled = compileDataset(project, name, { selections, caller });
  formatCompiled(compiled).forEach((line) => output.out(line));
}

/**
 * Runs a dataset on the current build for these selections, validated, defaulted and cascaded as the
 * results endpoint does, and prints its first `args.limit` rows in `args.format`.
 */
export async function run(
  project: Project,
  args: CliArgs,
  options: EngineSetup,
  output: Output,
): Promise<void> {
  const name = args.dataset ?? '';
  const dataset = datasetOf(project, name);
  const caller = callerFrom(project, args);
  const request = requestFromCli(project, dataset.parameters, args.params);
  const engine = new Engine(project, options);
  try {
    if (!(await engine.open())) throw new Error(noBuild(engine, options));
    const catalog = await buildCatalog(project, (sql) => engine.queryBuilt(sql));
    const selections = catalog.selections(dataset.parameters, request, caller);
    const result = await engine.runDataset(name, selections, caller, undefined, args.limit);
    formatRows(result, args.format).forEach((line) => output.out(line));
    if (args.format === 'table') {
      output.out(
        result.truncated
          ? `(the first ${result.rows.length} rows; --limit shows more)`
          : `(${result.rows.length} ${result.rows.length === 1 ? 'row' : 'rows'})`,
      );
    }
  } finally {
    await engine.close();
  }
}
