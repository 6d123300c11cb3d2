import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { BuildQueue } from '@/builds/build-queue';
import { BuildsService } from '@/builds/builds.service';
import { RendererProbe } from '@/dashboards/render/renderer-probe';
import { Database } from '@/database/database';
import { AccessTokensRepository } from '@/database/tables/access-tokens.repository';
import { Engine } from '@/engine/engine';
import { InstallationWatch } from '@/health/installation';
import { ServedProject } from '@/core/project/served-project';

export interface Check {
  /** `degraded`: part of what the replica serves does not work here; it stays ready for the rest. */
  status: 'up' | 'down' | 'degraded';
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

/** The folder this process was installed in: dist/ and node_modules/ are beside each other there. */
const INSTALLATION_ROOT = join(__dirname, '..', '..');

@Injectable()
export class HealthService {
  /** Taken when the service starts, to compare with what is on disk at each readiness check. */
  private readonly installation = new InstallationWatch(INSTALLATION_ROOT);

  constructor(
    private readonly database: Database,
    private readonly accessTokens: AccessTokensRepository,
    private readonly queue: BuildQueue,
    private readonly engine: Engine,
    private readonly builds: BuildsService,
    private readonly served: ServedProject,
    private readonly renderer: RendererProbe,
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
      project: { status: 'up', kind: this.served.current.name },
      environment: await this.environment(),
      installation: this.installationCheck(),
      renderer: this.rendererCheck(),
    };
    const ready = Object.values(checks).every((check) => check.status !== 'down');
    return { status: ready ? 'ready' : 'not_ready', checks };
  }

  /**
   * Not ready once the installation changed under the process: what it loads from now on may be missing or
   * of another version, and only a restart makes the code it runs and the files on disk agree again. Every
   * replica started from that folder says so, which is the point: one folder per version (docs/deployment.md).
   */
  private installationCheck(): Check {
    const changed = this.installation.changed();
    if (changed.length === 0) return { status: 'up', kind: 'files' };
    return {
      status: 'down',
      kind: 'files',
      detail:
        `the installation changed under this process (${changed.join(', ')} differ from the start): ` +
        'restart this process; modules it loads from now on may be missing or of another version',
    };
  }

  /**
   * PNG dashboards only: a renderer that does not work makes the check `degraded`, not the replica not
   * ready. JSON results and HTML dashboards still work, and a missing Chromium is the same on every replica
   * of an installation, so taking replicas out of rotation for it would turn a PNG outage into a total one.
   * PNG dashboards answer 503 renderer_unavailable with the same reason meanwhile.
   */
  private rendererCheck(): Check {
    const { works, detail } = this.renderer.state();
    return { status: works === true ? 'up' : 'degraded', kind: 'chromium', detail };
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
