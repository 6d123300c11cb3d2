import { existsSync, mkdirSync } from 'node:fs';
import { DomainError } from '@/core/errors';
import { EngineLimits, openDuckdb } from '@/engine/duckdb/duckdb-instance';
import { BUILD_TOO_LARGE, isOutOfMemory } from '@/engine/duckdb/duckdb-errors';
import { BuiltModel, LocatedError, materialize } from '@/engine/materialize/materialize-models';
import { ProjectError } from '@/core/project-errors';
import type { Env, ExternalConnections } from '@/engine/connections/connection-registry';
import { Environment, removeDatabaseFiles } from '@/engine/environment/environment';
import type { EnvironmentManager } from '@/engine/environment/environment-manager';
import type { Project } from '@/core/project/project';
import { isDiskFull, isUnavailable } from '@/runtime/outages';

export interface BuildProgress {
  model: string;
  kind: BuiltModel['kind'];
  /** 1-based position of the model in the build, out of `steps`. */
  step: number;
  steps: number;
  status: 'started' | 'done';
  /** Present when done. */
  rows?: number;
  durationMs?: number;
}

export interface ModelBuildFigures {
  model: string;
  kind: BuiltModel['kind'];
  rows: number;
  durationMs: number;
}

export interface BuildResult {
  buildId: string;
  file: string;
  models: ModelBuildFigures[];
  durationMs: number;
}

export interface BuildHooks {
  onProgress?: (progress: BuildProgress) => void;
  /**
   * Runs against the new environment, opened read-only, before readers are switched to it (for example
   * the parameters' option queries). Throwing fails the build, and the previous environment keeps serving.
   */
  beforeSwitch?: (environment: Environment) => Promise<void>;
  /**
   * Aborted to stop the build (a signal to the process): the running statement is interrupted, no further
   * model starts, the partial file is removed and the build rejects with {@link BuildInterruptedError}.
   * The abort's reason (a signal's name) is said in the error.
   */
  signal?: AbortSignal;
}

/**
 * Whose fault a failed build is: the project's (its SQL or its files, which an administrator fixes) or the
 * infrastructure's (a database, a source or a disk that the build needed, which waiting or an operator
 * fixes).
 */
export type BuildErrorFault = 'project' | 'infrastructure';

/**
 * A build failed; `model` names the model whose step failed, when one did. The project's fault is a 400
 * `invalid_project` (nothing the server can do makes that build succeed), the infrastructure's a 500
 * `build_failed`.
 */
export class BuildError extends DomainError {
  constructor(
    message: string,
    readonly model: string | undefined,
    readonly fault: BuildErrorFault,
  ) {
    super(fault === 'project' ? 'invalid_project' : 'build_failed', message);
  }
}

/**
 * Whose fault an error of a step that runs the project's SQL is: a neighbour that does not answer (an
 * external source, Postgres) or a full disk is the infrastructure's, anything else (the engine refused or
 * failed the SQL, the data it met, the memory the engine may use) the project's.
 */
function faultOfStep(error: unknown): BuildErrorFault {
  return isUnavailable(error) || isDiskFull(error) ? 'infrastructure' : 'project';
}

/**
 * A build stopped on purpose, before it switched readers (the process was told to stop): nothing of the
 * project is at fault, and the previous environment, if any, is what is served.
 */
export class BuildInterruptedError extends DomainError {
  constructor(readonly reason: string) {
    super('build_interrupted', `the build was interrupted by ${reason}`);
  }
}

function interruption(signal: AbortSignal): BuildInterruptedError {
  return new BuildInterruptedError(
    typeof signal.reason === 'string' ? signal.reason : 'a request to stop',
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isBuilt(model: Project['models'][number]): model is BuiltModel {
  return model.kind === 'seed' || model.kind === 'source' || model.kind === 'build';
}

/** Writes every seed, source and build model into a new DuckDB file; returns the figures per model. */
async function writeFile(
  project: Project,
  connections: ExternalConnections,
  file: string,
  onProgress: (progress: BuildProgress) => void,
  env: Env,
  limits: EngineLimits,
  signal?: AbortSignal,
): Promise<ModelBuildFigures[]> {
  // The project's own SQL is trusted here, but runs within the limits requests have.
  const instance = await openDuckdb(file, {}, limits);
  const connection = await instance.connect();
  // DuckDB honours an interrupt within milliseconds while a statement runs, but forgets one that comes
  // between two statements: the signal is also checked before each one starts (see duckdb-query.ts).
  const interrupt = () => connection.interrupt();
  signal?.addEventListener('abort', interrupt);
  const checkSignal = () => {
    if (signal?.aborted) throw interruption(signal);
  };
  try {
    const models = project.models.filter(isBuilt);
    const figures: ModelBuildFigures[] = [];
    for (const [index, model] of models.entries()) {
      checkSignal();
      const step = { model: model.name, kind: model.kind, step: index + 1, steps: models.length };
      onProgress({ ...step, status: 'started' });
      const started = performance.now();
      let rows: number;
      try {
        rows = await materialize(connection, project, connections, model, env, signal);
      } catch (error) {
        // The model did not fail: the statement was interrupted.
        checkSignal();
        const where = error instanceof LocatedError ? ` (${error.place})` : '';
        const reason = isOutOfMemory(error) ? BUILD_TOO_LARGE : messageOf(error);
        throw new BuildError(
          `${model.kind} model "${model.name}"${where} failed: ${reason}`,
          model.name,
          faultOfStep(error),
        );
      }
      const durationMs = Math.round(performance.now() - started);
      figures.push({ model: model.name, kind: model.kind, rows, durationMs });
      onProgress({ ...step, status: 'done', rows, durationMs });
    }
    // Readers open the file read-only, which needs everything in the file itself, not in a WAL.
    checkSignal();
    await connection.run('CHECKPOINT').catch((error: unknown) => {
      checkSignal();
      throw error;
    });
    return figures;
  } finally {
    signal?.removeEventListener('abort', interrupt);
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Builds a new environment file `<buildId>.duckdb` and switches readers to it. On failure the partial file
 * is deleted and the previous environment, if any, keeps serving.
 */
export async function materializeEnvironment(
  project: Project,
  manager: EnvironmentManager,
  connections: ExternalConnections,
  buildId: string,
  hooks: BuildHooks = {},
  /** What build models read with `env_var()`. */
  env: Env = {},
): Promise<BuildResult> {
  const started = performance.now();
  const file = manager.fileOf(buildId);
  mkdirSync(manager.dir, { recursive: true });
  // What builds cut off before (a killed process) left behind; never what a live one is writing.
  manager.removeLeftovers();
  if (existsSync(file))
    throw new BuildError(
      `an environment file for build ${buildId} already exists`,
      undefined,
      'infrastructure',
    );
  const onProgress = (progress: BuildProgress): void => {
    try {
      hooks.onProgress?.(progress);
    } catch {
      // A failing progress listener (a log line) must not fail the build.
    }
  };
  const { signal } = hooks;
  let environment: Environment | undefined;
  try {
    if (signal?.aborted) throw interruption(signal);
    const models = await writeFile(
      project,
      connections,
      file,
      onProgress,
      env,
      manager.limits,
      signal,
    );
    environment = await Environment.open(buildId, file, manager.limits, manager.exportDir);
    if (hooks.beforeSwitch) {
      try {
        await hooks.beforeSwitch(environment);
      } catch (error) {
        // The project's own problems (its SQL, its parameters' options) are the build's error as they are.
        const failure = new BuildError(
          error instanceof ProjectError
            ? error.message
            : `preparing the new environment failed: ${messageOf(error)}`,
          undefined,
          error instanceof ProjectError ? 'project' : faultOfStep(error),
        );
        failure.cause = error;
        throw signal?.aborted ? interruption(signal) : failure;
      }
    }
    // The last moment a stop is heeded: past it, the build is served.
    if (signal?.aborted) throw interruption(signal);
    environment.project = project;
    manager.install(environment);
    return { buildId, file, models, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    environment?.retire();
    removeDatabaseFiles(file);
    throw error instanceof BuildError || error instanceof BuildInterruptedError
      ? error
      : // Opening the new file, its checkpoint: nothing of the project's SQL runs there.
        new BuildError(`the build failed: ${messageOf(error)}`, undefined, 'infrastructure');
  }
}
