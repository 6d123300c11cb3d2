import { DuckDBTypeId } from '@duckdb/node-api';
import {
  BuildHooks,
  BuildResult,
  materializeEnvironment,
} from '@/engine/materialize/materialize-environment';
import {
  ConnectionOptions,
  Env,
  ExternalConnections,
} from '@/engine/connections/connection-registry';
import type { QueryLimits } from '@/engine/duckdb/duckdb-query';
import { DEFAULT_ENGINE_LIMITS, EngineLimits } from '@/engine/duckdb/duckdb-instance';
import type { RowBatch } from '@/engine/duckdb/duckdb-stream';
import { schemaType } from '@/engine/duckdb/duckdb-results';
import type { Environment, Lease } from '@/engine/environment/environment';
import {
  EnvironmentManager,
  ForeignBuild,
  projectIdentity,
} from '@/engine/environment/environment-manager';
import { CompiledDataset, compileDataset, datasetModel } from '@/engine/compile';
import type { ComposedQuery, RequestValues } from '@/engine/query/model-sql';
import { ModelReads, modelReads } from '@/engine/query/model-reads';
import type { JsonValue, QueryResult, RowWindow } from '@/engine/sql/query-result';
import {
  countQuery,
  queryAdhoc,
  queryBuilt,
  runComposed,
  streamComposed,
  windowQuery,
} from '@/engine/query/run-queries';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import type { DatasetSpec, Project } from '@/core/project/project';
import { loadProject } from '@/core/project/project-loader';
import { ServedProject } from '@/core/project/served-project';
import type { ProjectProblem } from '@/core/project-errors';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { checkModels, PlannedColumn } from '@/engine/check/check-models';
import type { WrittenExport } from '@/engine/duckdb/duckdb-export';
import { DatasetExportRequest, exportDataset } from '@/engine/export-dataset';
import { ExportSpace } from '@/engine/export/export-space';
import { ServerPaths } from '@/engine/server-paths';
import { ScrubbedErrors } from '@/engine/scrubbed-errors';

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
  /** Memory, threads and spill space of every DuckDB database: the one served, and a build's. */
  limits?: Partial<EngineLimits>;
  /**
   * Told when the data folder's pointer names another project's build, which is not served (see
   * {@link EnvironmentManager}); the service logs it.
   */
  onForeignBuild?: (found: ForeignBuild) => void;
}

/** Types of a planned column that stand for a type not resolved yet: a bound value's, a NULL's. */
const UNRESOLVED = new Set([DuckDBTypeId.INVALID, DuckDBTypeId.ANY, DuckDBTypeId.SQLNULL]);

/** Runs queries over the environment being built, before readers switch to it. */
export interface BuiltQueries {
  /** The project being built. */
  project: Project;
  /** A template over seeds, sources and build models (`ref()` only); rows as objects. */
  query(sqlTemplate: string): Promise<Record<string, JsonValue>[]>;
  /** Plans every runtime and dbview model on it (see {@link checkModels}); the problems found. */
  checkModels(catalog: ParameterCatalog): Promise<ProjectProblem[]>;
}

export interface EngineBuildHooks {
  onProgress?: BuildHooks['onProgress'];
  signal?: BuildHooks['signal'];
  beforeSwitch?: (built: BuiltQueries) => Promise<void>;
}

/**
 * The engine the services call: builds environments, and runs datasets, models and ad-hoc SQL for a
 * request's selections. Pure TypeScript, no Nest, so the CLI and the build worker use it as it is.
 */
export class Engine {
  readonly environments: EnvironmentManager;
  /** Where DuckDB writes exports, and the disk they may take. */
  private readonly exports: ExportSpace;
  private readonly connections: ExternalConnections;
  private readonly limits: QueryLimits;
  private readonly buildLimits: QueryLimits;
  private readonly env: Env;
  private readonly reads = new Map<string, ModelReads>();
  private building = false;
  private readonly errors: ScrubbedErrors;

  private readonly served: ServedProject;
  /** {@link freshBuildId}'s answer for the rest of this turn of the event loop (null: none). */
  private servedThisTurn?: string | null;

  /**
   * @param project the project to serve until an environment says otherwise: a build here switches to the
   * project it was built from, and following another process's build reads the project folder again.
   */
  constructor(project: Project | ServedProject, options: EngineOptions) {
    this.served = project instanceof ServedProject ? project : new ServedProject(project);
    const limits = { ...DEFAULT_ENGINE_LIMITS, ...options.limits };
    this.exports = new ExportSpace(options.dataDir, limits.exportLimitMb);
    this.environments = new EnvironmentManager(
      options.dataDir,
      (environment) => {
        // At start the project was read a moment ago (main.ts): not read again for the build opened.
        environment.project ??= this.opening ? this.project : this.projectOnDisk(environment.id);
        this.served.replace(environment.project);
        this.reads.clear();
        this.servedThisTurn = undefined;
      },
      limits,
      projectIdentity(this.served.current),
      options.onForeignBuild,
      this.exports.dir,
    );
    this.env = options.env ?? {};
    this.connections = new ExternalConnections(this.project.connections, this.env, {
      postgresPoolSize: options.postgresPoolSize ?? 5,
    });
    const maxRows = options.maxRows ?? 100_000;
    this.limits = { timeoutMs: options.queryTimeoutMs ?? 30_000, maxRows };
    this.buildLimits = { timeoutMs: options.buildQueryTimeoutMs ?? 300_000, maxRows };
    this.errors = new ScrubbedErrors(
      new ServerPaths({ dataDir: options.dataDir, projectDir: this.project.dir }),
    );
  }

  /** The project served: the one the current environment was built from. */
  get project(): Project {
    return this.served.current;
  }

  /**
   * The project folder as it is now, for a build another process made (from the same files: replicas
   * serve one project); when it does not load, the project served so far.
   */
  private projectOnDisk(buildId: string): Project {
    try {
      return loadProject(this.project.dir);
    } catch {
      return this.environments.keptProject(buildId, this.project.dir) ?? this.project;
    }
  }

  /** True while {@link open} runs. */
  private opening = false;

  /** Opens the environment built last, if any; false means a first build is needed. */
  async open(): Promise<boolean> {
    this.opening = true;
    try {
      return await this.environments.open();
    } finally {
      this.opening = false;
    }
  }

  /**
   * The project kept with the build served (the one it was built from, or checked on at a start since),
   * when it is not the project served now; undefined otherwise, or when that build kept none (made by an
   * earlier version).
   */
  keptProject(): { buildId: string; project: Project } | undefined {
    const buildId = this.environments.currentId;
    if (buildId === undefined) return undefined;
    const project = this.environments.keptProject(buildId, this.project.dir);
    return project && { buildId, project };
  }

  /** Keeps the project served as the one the build served goes with: it checked out on that build. */
  keepServedProject(): void {
    const buildId = this.environments.currentId;
    if (buildId !== undefined) this.environments.keepProject(buildId, this.project);
  }

  /**
   * Serves `project` with the build served now instead of the project it was opened with: the project
   * kept with that build, when the folder's own no longer checks out on it.
   */
  serveWithCurrentBuild(project: Project): Promise<void> {
    return this.environments.use((environment) => {
      environment.project = project;
      environment.missingTables = undefined;
      this.served.replace(project);
      this.reads.clear();
      this.servedThisTurn = undefined;
      return Promise.resolve();
    });
  }

  get ready(): boolean {
    return this.environments.ready;
  }

  /** Environment variables the project's connections need that are not set. */
  missingConnectionVariables(): string[] {
    return this.connections.missingVariables();
  }

  /**
   * Builds a new environment from `project` (by default the one served) and switches readers to both; one
   * build at a time per process.
   */
  async build(
    buildId: string,
    hooks: EngineBuildHooks = {},
    project: Project = this.project,
  ): Promise<BuildResult> {
    if (this.building) throw new Error('a build is already running in this process');
    this.building = true;
    const { beforeSwitch } = hooks;
    try {
      return await this.errors.around(() =>
        materializeEnvironment(
          project,
          this.environments,
          this.connections,
          buildId,
          {
            onProgress: hooks.onProgress,
            signal: hooks.signal,
            beforeSwitch:
              beforeSwitch &&
              ((environment) =>
                beforeSwitch({
                  project,
                  query: (sql) => queryBuilt(project, environment, sql, this.buildLimits),
                  checkModels: (catalog) => this.checkModelsOn(project, environment, catalog),
                })),
          },
          this.env,
        ),
      );
    } finally {
      this.building = false;
    }
  }

  /** The same queries as during a build, on the current environment (at start-up, without a build). */
  queryBuilt(sqlTemplate: string): Promise<Record<string, JsonValue>[]> {
    return this.errors.around(() =>
      this.environments.use((environment) =>
        queryBuilt(this.project, environment, sqlTemplate, this.buildLimits),
      ),
    );
  }

  /** Plans every runtime and dbview model on the current environment: the problems found. */
  checkModels(catalog: ParameterCatalog): Promise<ProjectProblem[]> {
    return this.environments.use((environment) =>
      this.checkModelsOn(environment.project ?? this.project, environment, catalog),
    );
  }

  /**
   * The tables the served project's seeds, sources and build models make that the environment served
   * lacks, as `model (kind)`: not empty when the build predates them (a build made by another checkout of
   * the project, or before a model was added), and then the datasets that read them cannot answer. Asked
   * once per environment. Undefined while nothing is served.
   */
  async missingTables(): Promise<string[] | undefined> {
    if (!this.environments.ready) return undefined;
    return this.environments.use((environment) => {
      const project = environment.project ?? this.project;
      environment.missingTables ??= tablesOf(environment).then((tables) =>
        project.models
          .filter(
            (model) => model.kind === 'seed' || model.kind === 'source' || model.kind === 'build',
          )
          .filter((model) => !tables.has(model.name))
          .map((model) => `${model.name} (${model.kind})`),
      );
      return environment.missingTables;
    });
  }

  private async checkModelsOn(
    project: Project,
    environment: Environment,
    catalog: ParameterCatalog,
  ): Promise<ProjectProblem[]> {
    const connection = await environment.connect();
    try {
      return await checkModels(project, catalog, {
        duckdb: async (sql) => {
          // Prepared, not run: DuckDB parses, binds and plans it, and says its columns.
          const prepared = await connection.prepare(sql);
          try {
            const columns: PlannedColumn[] = [];
            for (let index = 0; index < prepared.columnCount; index++) {
              const typeId = prepared.columnTypeId(index);
              // Not resolved before its values are bound (`SELECT $1`): its type is not known yet.
              if (UNRESOLVED.has(typeId)) continue;
              columns.push({
                name: prepared.columnName(index),
                type: schemaType(typeId),
                databaseType: prepared.columnType(index).toString(),
              });
            }
            return columns;
          } finally {
            prepared.destroySync();
          }
        },
        connection: async (name, sql, binds) => {
          await this.connections.get(name).plan(sql, binds, this.limits);
        },
      });
    } finally {
      connection.closeSync();
    }
  }

  /**
   * The statement a dataset runs for these selections, without running it: what {@link runDataset},
   * {@link countDataset}, {@link pageDataset} and {@link streamDataset} take, so that a request needing
   * several of them renders the templates once. `dataset` is a name (a 404 when the project served has
   * none) or the spec a caller has already resolved.
   */
  compileDataset(
    dataset: DatasetSpec | string,
    selections: SelectionValues,
    caller: CallerView,
  ): CompiledDataset {
    return compileDataset(this.project, dataset, { selections, caller });
  }

  /**
   * The id of the build being served when no other process has switched it since it was last followed,
   * else undefined (then {@link acquireEnvironment} follows the switch): what a request answered from a
   * cache keys on without holding the build. The pointer's stat behind it is made once per turn of the
   * event loop and shared by the requests of that turn (a cached read asks twice; see docs/performance.md,
   * "Figures behind the code", "The build pointer, once a turn"): a switch made by another process during
   * the turn is seen from the next one, as if made just after; a switch made here is seen at once.
   */
  freshBuildId(): string | undefined {
    if (this.servedThisTurn === undefined) {
      this.servedThisTurn = this.environments.freshId() ?? null;
      setImmediate(() => {
        this.servedThisTurn = undefined;
      });
    }
    return this.servedThisTurn ?? undefined;
  }

  /**
   * Holds the environment being served (following a build made by another process) until released: a
   * request that keys a cache by its build id runs its query on that same build.
   */
  acquireEnvironment(): Promise<Lease> {
    return this.environments.acquire();
  }

  /** What a dataset's result depends on besides selections and build: the caller parts its SQL reads. */
  datasetReads(dataset: DatasetSpec | string): ModelReads {
    const model = datasetModel(this.project, dataset);
    let reads = this.reads.get(model);
    if (!reads) {
      reads = modelReads(this.project, model);
      this.reads.set(model, reads);
    }
    return reads;
  }

  /**
   * Runs a compiled dataset: its first `maxRows` rows (`MAX_RESULT_ROWS` unless given), `truncated` when
   * there are more. On `environment` when given (a lease the caller holds), else on the current one.
   */
  runDataset(
    compiled: CompiledDataset,
    environment?: Environment,
    maxRows = this.limits.maxRows,
  ): Promise<QueryResult> {
    return this.runOn(compiled.model, compiled, environment, { ...this.limits, maxRows });
  }

  /** The rows of `window` of a compiled dataset's result (at most `window.limit`), in the result's order. */
  pageDataset(
    compiled: CompiledDataset,
    window: RowWindow,
    environment?: Environment,
  ): Promise<QueryResult> {
    return this.runOn(compiled.model, windowQuery(compiled, window), environment, {
      ...this.limits,
      maxRows: window.limit,
    });
  }

  /** The number of rows of a compiled dataset's result, counted by the database. */
  async countDataset(compiled: CompiledDataset, environment?: Environment): Promise<number> {
    const result = await this.runOn(compiled.model, countQuery(compiled), environment, {
      ...this.limits,
      maxRows: 1,
    });
    return Number(result.rows[0]?.[0] ?? 0);
  }

  private runOn(
    model: string,
    composed: ComposedQuery,
    environment: Environment | undefined,
    limits: QueryLimits,
  ): Promise<QueryResult> {
    return this.errors.around(() =>
      runComposed(
        model,
        composed,
        (work) => (environment ? work(environment) : this.environments.use(work)),
        this.connections,
        limits,
      ),
    );
  }

  /**
   * A compiled dataset's rows as DuckDB produces them, chunk by chunk, without the row limit: memory stays
   * flat whatever the size. The environment is held until the stream ends or is abandoned (`return()`).
   */
  async *streamDataset(compiled: CompiledDataset): AsyncGenerator<RowBatch> {
    const lease = await this.environments.acquire();
    try {
      yield* streamComposed(
        compiled.model,
        compiled,
        lease.environment,
        this.connections,
        this.limits,
      );
    } catch (error) {
      throw this.errors.of(error);
    } finally {
      lease.release();
    }
  }

  /**
   * Every row of a compiled dataset in an export format, written by DuckDB while it holds the environment
   * (see {@link exportDataset}). A dataset on an external connection is exported as CSV or NDJSON from its
   * rows ({@link streamDataset}) instead.
   */
  exportDataset(compiled: CompiledDataset, request: DatasetExportRequest): Promise<WrittenExport> {
    return exportDataset(compiled, request, {
      environments: this.environments,
      exports: this.exports,
      timeoutMs: this.limits.timeoutMs,
      errors: this.errors,
    });
  }

  /**
   * Read-only SQL over the built tables and the runtime models it names; errors are `invalid_sql` (which
   * includes SQL reading the server's settings or files), `query_timeout` or `query_too_large`.
   */
  runSql(sql: string, selections: SelectionValues, caller: CallerView): Promise<QueryResult> {
    const request: RequestValues = { selections, caller };
    return this.errors.around(() =>
      this.environments.use((environment) =>
        queryAdhoc(this.project, environment, sql, request, this.limits),
      ),
    );
  }

  async close(): Promise<void> {
    this.environments.close();
    await this.connections.close();
    this.exports.close();
  }
}

/** The names of the tables of an environment. */
async function tablesOf(environment: Environment): Promise<Set<string>> {
  const connection = await environment.connect();
  try {
    const reader = await connection.runAndReadAll(
      "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'",
    );
    return new Set(reader.getRows().map((row) => String(row[0])));
  } finally {
    connection.closeSync();
  }
}
