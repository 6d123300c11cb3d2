import { NotFoundError } from '@/common/errors';
import { BuildHooks, BuildResult, runBuild } from '@/engine/build/build-runner';
import {
  ConnectionOptions,
  Env,
  ExternalConnections,
} from '@/engine/connections/connection-registry';
import type { QueryLimits } from '@/engine/duckdb/duckdb-query';
import { EnvironmentManager } from '@/engine/environment/environment-manager';
import { CompiledDataset, compileDataset } from '@/engine/compile';
import { composeModel, RequestValues } from '@/engine/query/model-sql';
import type { JsonValue, QueryResult } from '@/engine/query/query-result';
import { queryAdhoc, queryBuilt, runComposed } from '@/engine/query/run-queries';
import type { CallerView, SelectionValues } from '@/parameters/selection-value';
import { findDataset, Project } from '@/project/project';

export interface EngineOptions {
  /** `DATA_DIR`: environments live in `<dataDir>/environments`. */
  dataDir: string;
  /** Where connections' `url_env` variables are read (the service passes `process.env`). */
  env?: Env;
  /** Time limit of one request's query. */
  queryTimeoutMs?: number;
  /** Time limit of one option or bounds query during a build. */
  buildQueryTimeoutMs?: number;
  /** Rows kept of one result (`MAX_RESULT_ROWS`); beyond it a result is marked truncated. */
  maxRows?: number;
  postgresPoolSize?: ConnectionOptions['postgresPoolSize'];
}

/** Runs queries over the environment being built, before readers switch to it. */
export interface BuiltQueries {
  /** A template over seeds, sources and build models (`ref()` only); rows as objects. */
  query(sqlTemplate: string): Promise<Record<string, JsonValue>[]>;
}

export interface EngineBuildHooks {
  onProgress?: BuildHooks['onProgress'];
  beforeSwitch?: (built: BuiltQueries) => Promise<void>;
}

/**
 * The engine the services call: builds environments, and runs datasets, models and ad-hoc SQL for a
 * request's selections. Pure TypeScript, no Nest, so the CLI and the build worker use it as it is.
 */
export class Engine {
  readonly environments: EnvironmentManager;
  private readonly connections: ExternalConnections;
  private readonly limits: QueryLimits;
  private readonly buildLimits: QueryLimits;
  private building = false;

  constructor(
    readonly project: Project,
    options: EngineOptions,
  ) {
    this.environments = new EnvironmentManager(options.dataDir);
    this.connections = new ExternalConnections(project.connections, options.env ?? {}, {
      postgresPoolSize: options.postgresPoolSize ?? 5,
    });
    const maxRows = options.maxRows ?? 100_000;
    this.limits = { timeoutMs: options.queryTimeoutMs ?? 30_000, maxRows };
    this.buildLimits = { timeoutMs: options.buildQueryTimeoutMs ?? 300_000, maxRows };
  }

  /** Opens the environment built last, if any; false means a first build is needed. */
  open(): Promise<boolean> {
    return this.environments.open();
  }

  get ready(): boolean {
    return this.environments.ready;
  }

  /** Environment variables the project's connections need that are not set. */
  missingConnectionVariables(): string[] {
    return this.connections.missingVariables();
  }

  /** Builds a new environment and switches readers to it; one build at a time per process. */
  async build(buildId: string, hooks: EngineBuildHooks = {}): Promise<BuildResult> {
    if (this.building) throw new Error('a build is already running in this process');
    this.building = true;
    const { beforeSwitch } = hooks;
    try {
      return await runBuild(this.project, this.environments, this.connections, buildId, {
        onProgress: hooks.onProgress,
        beforeSwitch:
          beforeSwitch &&
          ((environment) =>
            beforeSwitch({
              query: (sql) => queryBuilt(this.project, environment, sql, this.buildLimits),
            })),
      });
    } finally {
      this.building = false;
    }
  }

  /** The same queries as during a build, on the current environment (at start-up, without a build). */
  queryBuilt(sqlTemplate: string): Promise<Record<string, JsonValue>[]> {
    return this.environments.use((environment) =>
      queryBuilt(this.project, environment, sqlTemplate, this.buildLimits),
    );
  }

  /** The statement a dataset runs for these selections, without running it. */
  compileDataset(name: string, selections: SelectionValues, caller: CallerView): CompiledDataset {
    return compileDataset(this.project, name, { selections, caller });
  }

  /** Runs a dataset's model; the whole result, so that the caller counts and pages it without rerunning. */
  async runDataset(
    name: string,
    selections: SelectionValues,
    caller: CallerView,
  ): Promise<QueryResult> {
    const dataset = findDataset(this.project, name);
    if (!dataset) throw new NotFoundError(`No dataset named "${name}"`);
    return this.runModel(dataset.model, selections, caller);
  }

  runModel(model: string, selections: SelectionValues, caller: CallerView): Promise<QueryResult> {
    const composed = composeModel(this.project, model, { selections, caller });
    return runComposed(
      model,
      composed,
      (work) => this.environments.use(work),
      this.connections,
      this.limits,
    );
  }

  /** Read-only SQL over the built tables and the runtime models it names; errors are `invalid_sql`. */
  runSql(sql: string, selections: SelectionValues, caller: CallerView): Promise<QueryResult> {
    const request: RequestValues = { selections, caller };
    return this.environments.use((environment) =>
      queryAdhoc(this.project, environment, sql, request, this.limits),
    );
  }

  async close(): Promise<void> {
    this.environments.close();
    await this.connections.close();
  }
}
