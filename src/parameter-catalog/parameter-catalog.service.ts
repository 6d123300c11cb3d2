import { Injectable } from '@nestjs/common';
import { Engine } from '@/engine/engine';
import type { BuiltQueries } from '@/engine/engine';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { buildCatalog, parameterQueries } from '@/core/parameters/resolve-parameters';
import type { Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

interface Resolved {
  project: Project;
  environmentId: string | undefined;
  catalog: ParameterCatalog;
}

/**
 * The parameter catalog of the environment being served. Options and bounds that come from queries are
 * resolved once per environment: after a build here, or when this process notices another process's build.
 */
@Injectable()
export class ParameterCatalogService {
  private resolved?: Resolved;
  private resolving?: Promise<Resolved>;
  private readonly queries = new WeakMap<Project, { parameter: string; sql: string }[]>();

  constructor(
    private readonly engine: Engine,
    private readonly served: ServedProject,
  ) {}

  /** The option and bounds queries of the project served, worked out once per project. */
  private queriesOf(project: Project): { parameter: string; sql: string }[] {
    let queries = this.queries.get(project);
    if (!queries) {
      queries = parameterQueries(project.parameters);
      this.queries.set(project, queries);
    }
    return queries;
  }

  /** The catalog for the current environment; 503 not_ready before the first build when queries need one. */
  async catalog(): Promise<ParameterCatalog> {
    const project = this.served.current;
    const environmentId =
      this.queriesOf(project).length === 0
        ? undefined
        : (this.engine.freshBuildId() ?? (await this.currentEnvironment()));
    // Following another process's build may have brought its project too: start again with it.
    if (this.served.current !== project) return this.catalog();
    const resolved = this.resolved;
    if (resolved && resolved.project === project && resolved.environmentId === environmentId) {
      return resolved.catalog;
    }
    // Kept once resolved: without it, a process that did not build itself (a restart, a second process)
    // ran every option query again on every request.
    this.resolving ??= this.resolve(project, environmentId, (sql) => this.engine.queryBuilt(sql))
      .then((done) => (this.resolved = done))
      .finally(() => {
        this.resolving = undefined;
      });
    return (await this.resolving).catalog;
  }

  /**
   * Runs the option and bounds queries of the project being built on its new environment, before it is
   * switched in: a query that fails or yields invalid options fails the build, and the previous project and
   * environment keep serving.
   */
  async prepareFor(environmentId: string, built: BuiltQueries): Promise<ParameterCatalog> {
    this.resolved = await this.resolve(built.project, environmentId, (sql) => built.query(sql));
    return this.resolved.catalog;
  }

  private async currentEnvironment(): Promise<string> {
    // use() follows the pointer, so a build made by another process is noticed here.
    return this.engine.environments.use((environment) => Promise.resolve(environment.id));
  }

  private async resolve(
    project: Project,
    environmentId: string | undefined,
    query: (sql: string) => Promise<Record<string, unknown>[]>,
  ): Promise<Resolved> {
    return { project, environmentId, catalog: await buildCatalog(project, query) };
  }
}
