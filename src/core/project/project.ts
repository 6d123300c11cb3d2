import type { BuildSchedule } from '@/core/project/build-schedule';
import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import type { UserField } from '@/core/user-fields';

/** The types a column can have in a dataset's schema. */
export type ColumnType =
  'string' | 'integer' | 'number' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'time';

export type ColumnCategory = 'dimension' | 'measure' | 'misc';

/** Column metadata of a model, as written in its `.yml` file. */
export interface ColumnSpec {
  name: string;
  /** Absent when the file leaves the type to the data (sniffed seeds, query results). */
  type?: ColumnType;
  /** The DuckDB type a seed or source column is loaded as, derived from `type` (`DECIMAL(10,2)`). */
  databaseType?: string;
  description: string;
  category: ColumnCategory;
  /** When the column is present, in the author's words (for example "group_by is trans"). */
  condition?: string;
}

export type ModelKind = 'seed' | 'source' | 'build' | 'runtime' | 'dbview';

interface ModelCommon {
  name: string;
  description: string;
  columns: ColumnSpec[];
  /** The `.yml` file of the model, relative to the project folder; absent for a seed without one. */
  metadataFile?: string;
}

/** A CSV file of the project, loaded by the build. */
export interface SeedModel extends ModelCommon {
  kind: 'seed';
  csvFile: string;
}

/** A table (or a query) of an external connection, copied into the environment by the build. */
export interface SourceModel extends ModelCommon {
  kind: 'source';
  connection: string;
  /** `schema.table` split into its parts, when the source names a table. */
  table?: string[];
  /** Plain SQL run on the connection, when the source is a query rather than a table. */
  sql?: string;
  sqlFile?: string;
}

/** Models written as Nunjucks SQL templates. */
interface TemplateModel extends ModelCommon {
  sql: string;
  sqlFile: string;
  /** Models named by `ref()`, in order of first use. */
  refs: string[];
}

/** SQL over seeds, sources and build models, materialised by the build. */
export interface BuildModel extends TemplateModel {
  kind: 'build';
}

/** SQL run per request in DuckDB over the built environment, with the request's selections. */
export interface RuntimeModel extends TemplateModel {
  kind: 'runtime';
}

/** SQL run per request on an external connection, with the request's selections. */
export interface DbviewModel extends TemplateModel {
  kind: 'dbview';
  connection: string;
}

export type Model = SeedModel | SourceModel | BuildModel | RuntimeModel | DbviewModel;

export type ConnectionKind = 'postgres';

/** An external database; its URL is read from the environment variable `urlEnv`, never from the file. */
export interface ConnectionSpec {
  name: string;
  kind: ConnectionKind;
  urlEnv: string;
  description: string;
}

export type Scope = 'public' | 'protected' | 'private';

export interface DatasetSpec {
  name: string;
  label: string;
  description: string;
  scope: Scope;
  /** Names of parameters declared under `parameters:`, in the order written. */
  parameters: string[];
  model: string;
}

export type DashboardFormat = 'html' | 'png';

export interface DashboardSpec {
  name: string;
  label: string;
  description: string;
  scope: Scope;
  format: DashboardFormat;
  parameters: string[];
  /** The Nunjucks template, relative to the project folder. */
  template: string;
}

/** The data project as the service uses it, after validation. */
export interface Project {
  /** Absolute path of the project folder. */
  dir: string;
  /** The manifest's file name, relative to `dir` (problems in parameter definitions name it). */
  manifestFile: string;
  name: string;
  label: string;
  description: string;
  majorVersion: number;
  /** Project-defined user attributes, in manifest order. */
  userFields: UserField[];
  connections: ConnectionSpec[];
  /** Every model, dependencies before the models that ref them. */
  models: Model[];
  /**
   * The `parameters:` list as written; the parameters domain validates it. The loader only checks that
   * every entry has a unique name, so that datasets and dashboards can be checked against it.
   */
  parameterDefinitions: unknown[];
  /** The parameters, validated by the parameters domain, in the project's order. */
  parameters: ParameterDefinition[];
  datasets: DatasetSpec[];
  dashboards: DashboardSpec[];
  /** `build.schedule`: when the project is rebuilt by itself; undefined when only on demand. */
  schedule?: BuildSchedule;
}

/** `{version}` of the current layout: `v{major_version}`. */
export function projectVersion(project: Pick<Project, 'majorVersion'>): string {
  return `v${project.majorVersion}`;
}

export function findModel(project: Pick<Project, 'models'>, name: string): Model | undefined {
  return project.models.find((model) => model.name === name);
}

export function findDataset(
  project: Pick<Project, 'datasets'>,
  name: string,
): DatasetSpec | undefined {
  return project.datasets.find((dataset) => dataset.name === name);
}
