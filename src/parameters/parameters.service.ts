import { Inject, Injectable } from '@nestjs/common';
import { Engine } from '@/engine/engine';
import type { BuiltQueries } from '@/engine/engine';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { buildCatalog, parameterQueries } from '@/core/parameters/resolve-parameters';
import type { Project } from '@/core/project/project';
import { PROJECT } from '@/project/project.tokens';

interface Resolved {
  environmentId: string | undefined;
  catalog: ParameterCatalog;
}

/**
 * The parameter catalog of the environment being served. Options and bounds that come from queries are
 * resolved once per environment: after a build here, or when this process notices another process's build.
 */
@Injectable()
export class ParametersService {
  private resolved?: Resolved;
  private resolving?: Promise<Resolved>;
  private readonly queries: { parameter: string; sql: string }[];

  constructor(
    private readonly engine: Engine,
    @Inject(PROJECT) private readonly project: Project,
  ) {
    this.queries = parameterQueries(project.parameters);
  }

  /** The catalog for the current environment; 503 not_ready before the first build when queries need one. */
  async catalog(): Promise<ParameterCatalog> {
    const environmentId =
      this.queries.length === 0
        ? undefined
        : (this.engine.environments.freshId() ?? (await this.currentEnvironment()));
    if (this.resolved && this.resolved.environmentId === environmentId)
      return this.resolved.catalog;
    // Kept once resolved: without it, a process that did not build itself (a restart, a second process)
    // ran every option query again on every request.
    this.resolving ??= this.resolve(environmentId, (sql) => this.engine.queryBuilt(sql))
      .then((resolved) => (this.resolved = resolved))
      .finally(() => {
        this.resolving = undefined;
      });
    return (await this.resolving).catalog;
  }

  /**
   * Runs the option and bounds queries on an environment being built, before it is switched in: a query
   * that fails or yields invalid options fails the build, and the previous environment keeps serving.
   */
  async prepareFor(environmentId: string, built: BuiltQueries): Promise<ParameterCatalog> {
    this.resolved = await this.resolve(environmentId, (sql) => built.query(sql));
    return this.resolved.catalog;
  }

  private async currentEnvironment(): Promise<string> {
    // use() follows the pointer, so a build made by another process is noticed here.
    return this.engine.environments.use((environment) => Promise.resolve(environment.id));
  }

  private async resolve(
    environmentId: string | undefined,
    query: (sql: string) => Promise<Record<string, unknown>[]>,
  ): Promise<Resolved> {
    return { environmentId, catalog: await buildCatalog(this.project, query) };
  }
}
