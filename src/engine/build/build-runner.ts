import { existsSync, mkdirSync } from 'node:fs';
import { DomainError } from '@/core/errors';
import { EngineLimits, openDuckdb } from '@/engine/duckdb/duckdb-instance';
import { BUILD_TOO_LARGE, isOutOfMemory } from '@/engine/duckdb/duckdb-errors';
import { BuiltModel, LocatedError, materialize } from '@/engine/build/materialize';
import { ProjectError } from '@/core/project/project-errors';
import type { Env, ExternalConnections } from '@/engine/connections/connection-registry';
import { Environment, removeDatabaseFiles } from '@/engine/environment/environment';
import type { EnvironmentManager } from '@/engine/environment/environment-manager';
import type { Project } from '@/core/project/project';

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
}

/** A build failed; `model` names the model whose step failed, when one did. */
export class BuildError extends DomainError {
  constructor(
    message: string,
    readonly model?: string,
  ) {
    super('build_failed', message);
  }
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
): Promise<ModelBuildFigures[]> {
  // The project's own SQL is trusted here, but runs within the limits requests have.
  const instance = await openDuckdb(file, {}, limits);
  const connection = await instance.connect();
  try {
    const models = project.models.filter(isBuilt);
    const figures: ModelBuildFigures[] = [];
    for (const [index, model] of models.entries()) {
      const step = { model: model.name, kind: model.kind, step: index + 1, steps: models.length };
      onProgress({ ...step, status: 'started' });
      const started = performance.now();
      let rows: number;
      try {
        rows = await materialize(connection, project, connections, model, env);
      } catch (error) {
        const where = error instanceof LocatedError ? ` (${error.place})` : '';
        const reason = isOutOfMemory(error) ? BUILD_TOO_LARGE : messageOf(error);
        throw new BuildError(
          `${model.kind} model "${model.name}"${where} failed: ${reason}`,
          model.name,
        );
      }
      const durationMs = Math.round(performance.now() - started);
      figures.push({ model: model.name, kind: model.kind, rows, durationMs });
      onProgress({ ...step, status: 'done', rows, durationMs });
    }
    // Readers open the file read-only, which needs everything in the file itself, not in a WAL.
    await connection.run('CHECKPOINT');
    return figures;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Builds a new environment file `<buildId>.duckdb` and switches readers to it. On failure the partial file
 * is deleted and the previous environment, if any, keeps serving.
 */
export async function runBuild(
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
  if (existsSync(file))
    throw new BuildError(`an environment file for build ${buildId} already exists`);
  const onProgress = (progress: BuildProgress): void => {
    try {
      hooks.onProgress?.(progress);
    } catch {
      // A failing progress listener (a log line) must not fail the build.
    }
  };
  let environment: Environment | undefined;
  try {
    const models = await writeFile(project, connections, file, onProgress, env, manager.limits);
    environment = await Environment.open(buildId, file, manager.limits);
    if (hooks.beforeSwitch) {
      try {
        await hooks.beforeSwitch(environment);
      } catch (error) {
        // The project's own problems (its SQL, its parameters' options) are the build's error as they are.
        const failure = new BuildError(
          error instanceof ProjectError
            ? error.message
            : `preparing the new environment failed: ${messageOf(error)}`,
        );
        failure.cause = error;
        throw failure;
      }
    }
    environment.project = project;
    manager.install(environment);
    return { buildId, file, models, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    environment?.retire();
    removeDatabaseFiles(file);
    throw error instanceof BuildError
      ? error
      : new BuildError(`the build failed: ${messageOf(error)}`);
  }
}
