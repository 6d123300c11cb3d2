import { Injectable } from '@nestjs/common';
import { BuildQueue } from '@/builds/build-queue';
import { BuildsService } from '@/builds/builds.service';
import { Database } from '@/database/database';
import { AccessTokensRepository } from '@/database/tables/access-tokens.repository';
import { Engine } from '@/engine/engine';
import { Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

export interface Check {
  status: 'up' | 'down';
  kind?: string;
  detail?: string;
  /** The environment's build id, when one is served. */
  build?: string;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: Record<string, Check>;
}

const CHECK_TIMEOUT_MS = 2000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function probe(kind: string, run: () => Promise<unknown>): Promise<Check> {
  try {
    await within(run(), CHECK_TIMEOUT_MS);
    return { status: 'up', kind };
  } catch (error) {
    return { status: 'down', kind, detail: error instanceof Error ? error.message : String(error) };
  }
}

@Injectable()
export class HealthService {
  /** The project being served now (a build may replace it): read per use, never kept. */
  private get project(): Project {
    return this.served.current;
  }

  constructor(
    private readonly database: Database,
    private readonly accessTokens: AccessTokensRepository,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly builds: BuildsService,
    private readonly served: ServedProject,
  ) {}

  async readiness(): Promise<Readiness> {
    const [database, queue] = await Promise.all([
      // Not just SELECT 1: the query that every request with a token runs, through the same pool and prepared
      // statement, so that readiness fails whenever those requests would.
      probe(this.database.kind, () => this.accessTokens.checkLookup()),
      probe(this.queue.kind === 'bullmq' ? 'redis' : 'in-process', () => this.queue.ping()),
    ]);
    const checks: Record<string, Check> = {
      database,
      queue,
      project: { status: 'up', kind: this.project.name },
      environment: await this.environment(),
    };
    const ready = Object.values(checks).every((check) => check.status === 'up');
    return { status: ready ? 'ready' : 'not_ready', checks };
  }

  /**
   * Whether the build served can answer the project's datasets: one is open (open() follows a build made by
   * another process; before the first build there is nothing to serve) and has every table the project's
   * seeds, sources and build models make.
   */
  private async environment(): Promise<Check> {
    const environments = this.engine.environments;
    if (!(await this.engine.open().catch(() => false))) {
      const foreign = environments.foreign;
      return {
        status: 'down',
        kind: 'duckdb',
        detail:
          (await this.builds.whyNotServing().catch(() => undefined)) ??
          (foreign
            ? `the data folder's build ${foreign.buildId} is of another project ` +
              `(${foreign.identity ?? 'built by an earlier version'}), not of ${environments.identity}: ` +
              'the first build of this project has not finished'
            : 'the first build has not finished'),
      };
    }
    const build = environments.currentId;
    let missing: string[] | undefined;
    try {
      missing = await within(this.engine.missingTables(), CHECK_TIMEOUT_MS);
    } catch (error) {
      return {
        status: 'down',
        kind: 'duckdb',
        build,
        detail: `the tables of build ${build} could not be listed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (missing && missing.length > 0) {
      return {
        status: 'down',
        kind: 'duckdb',
        build,
        detail:
          `build ${build} lacks tables the project needs: ${missing.join(', ')}; it was built before ` +
          'they were added, or from another copy of the project. Build the project as it is here: ' +
          'POST P/build, or `npm run drey -- build` on this data folder',
      };
    }
    return { status: 'up', kind: 'duckdb', build };
  }
}
