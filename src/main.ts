// First: V8 makes its first pretenuring decisions while the modules below load.
import '@/runtime/heap-policy';
import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { JsonLogger } from '@/runtime/json-logger';
import { SERVICE_VERSION } from '@/config/service-version';
import { AppConfig, ConfigError, loadConfig } from '@/config/config';
import { withProjectDataDir } from '@/config/data-dir';
import { localOrigin } from '@/config/loopback';
import { EnvFileError, loadEnvFile } from '@/config/env-file';
import { EmbeddedDatabaseInUseError, logStaleLock } from '@/database/embedded/embedded-lock';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@/database/embedded/embedded-postgres';
import { describeProblem, ProjectError } from '@/core/project-errors';
import { loadProject, readProjectName } from '@/core/project/project-loader';
import type { Project } from '@/core/project/project';
import { lastGoodBuild } from '@/engine/environment/build-pointer';
import { probePort, portProblem } from '@/runtime/port-probe';
import { startupStep } from '@/runtime/startup-step';
import { keepIdleConnections } from '@/runtime/keep-alive';
import { EXIT_PROJECT_INVALID } from '@/runtime/exit-codes';

async function main(): Promise<void> {
  let config: AppConfig;
  let envFile;
  try {
    envFile = loadEnvFile(process.env);
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof EnvFileError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = new JsonLogger(config.logLevel);
  // Said before the slow steps (the embedded database's first start, loading Nest's modules: up to 20 s on a
  // first run), so that an operator sees at once that the service is coming up, which one, and its pid.
  logger.emit('info', 'starting', {
    version: SERVICE_VERSION,
    projectDir: config.projectDir,
    pid: process.pid,
  });
  // A port another process holds is said at once, in one line, rather than as Node's EADDRINUSE once the
  // database, the modules and the build have started (seconds later).
  const portError = await probePort(config.port, config.host);
  const portLine = portError && portProblem(portError, config.port, config.host);
  if (portLine) {
    process.stderr.write(`${portLine}\n`);
    process.exit(1);
  }
  // The project is checked before Nest starts, so that an invalid one is the clean list of its problems
  // (Nest would log the error with a stack trace first, from the module that loads it).
  let project: Project;
  try {
    project = loadProject(config.projectDir);
  } catch (error) {
    if (!(error instanceof ProjectError)) throw error;
    const kept = lastGoodBuildFor(config);
    if (!kept) {
      process.stderr.write(
        `${error.message}\nNothing is served: there is no earlier build of this project to serve ` +
          'meanwhile. Fix the files named above, then start again.\n',
      );
      process.exit(EXIT_PROJECT_INVALID);
    }
    // As a running server does when a build fails: the last good build goes on serving, with the project it
    // was built from, until the folder is fixed and built (a save under `drey dev`, POST P/build, SIGHUP).
    project = kept.project;
    process.stderr.write(
      `${error.message}\nServing the last good build (${kept.buildId}) meanwhile, with the project as ` +
        'it was then. Fix the files named above; `drey dev` builds on the next save, otherwise rebuild ' +
        '(POST P/build, or SIGHUP).\n',
    );
    logger.emit('error', 'the project folder does not load: serving the last good build', {
      buildId: kept.buildId,
      projectDir: config.projectDir,
      problems: error.problems.map(describeProblem),
      hint: 'fix the files named, then save (drey dev) or rebuild (POST P/build, SIGHUP)',
    });
  }
  // The data folder is the project's own unless DATA_DIR says otherwise: known once its name is.
  const dataDir = withProjectDataDir(config, project.name);
  config = dataDir.config;
  const { earlierState } = dataDir;
  // The embedded database opens in its own thread while this one loads the application's modules (a few
  // seconds together); Database.open then takes the database this started. Its errors surface there.
  // It takes the folder's lock first: a folder another process has open is refused, naming that process.
  let embedded: Promise<EmbeddedPostgres> | undefined;
  if (!config.databaseUrl) {
    try {
      embedded = startEmbeddedPostgres(config.dataDir, {
        command: 'server',
        onStaleLock: (holder) => logStaleLock(logger, holder),
      });
      embedded.catch(() => undefined);
    } catch (error) {
      if (error instanceof EmbeddedDatabaseInUseError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(1);
      }
      throw error;
    }
  }
  startupStep(logger, 'loading the application', { project: project.name });
  const { createApp } = await import('./app');
  const { installShutdown } = await import('./runtime/shutdown');
  if (earlierState) {
    logger.emit('warn', 'data folder of an earlier version not used', { hint: earlierState });
  }
  try {
    const app = await createApp(config, logger, project);
    const { BuildsService } = await import('./builds/builds.service');
    installShutdown(app, logger, config.shutdownTimeoutMs, (signal) =>
      app.get(BuildsService).stop(signal),
    );
    // SIGHUP rebuilds, reading the project folder again (what `drey dev` sends on a change).
    process.on(
      'SIGHUP',
      () =>
        void app
          .get(BuildsService)
          .rebuild('SIGHUP')
          .catch(() => undefined),
    );
    startupStep(logger, 'modules started');
    keepIdleConnections(app.getHttpServer());
    await app.listen(config.port, config.host).catch((error: unknown) => {
      // Taken since the probe above: the same one line.
      const line = portProblem(error, config.port, config.host);
      if (!line) throw error;
      process.stderr.write(`${line}\n`);
      process.exit(1);
    });
    if (embedded) {
      // Named in the embedded database's lock: `drey mcp` beside this server relays to its MCP endpoint
      // (cli/mcp-relay.ts) rather than open the database a second time.
      const database = await embedded;
      const { ServedProject } = await import('./core/project/served-project');
      const { currentPath } = await import('./http/routes');
      database.publishHttp(
        localOrigin(app.getHttpServer().address() as AddressInfo),
        currentPath(app.get(ServedProject).current),
      );
    }
    // Exports, queries and compression off the event loop yield the CPU to it (BackgroundThreads).
    const { BackgroundThreads } = await import('./runtime/background-threads');
    new BackgroundThreads(config.backgroundThreadNice, (error) =>
      logger.emit('warn', 'background threads keep their priority', {
        error: error instanceof Error ? error.message : String(error),
      }),
    ).start();
    const { startupSummary } = await import('./startup-summary');
    await startupSummary(app, config, logger, envFile);
  } catch (error) {
    if (error instanceof ProjectError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    logger.emit('error', 'start-up failed', {
      error: error instanceof Error ? error.message : String(error),
    });
    process.exit(1);
  }
}

/**
 * The last good build of the project whose folder does not load, from the data folder the configuration
 * gives it: by its name when project.yml still says it; otherwise the build kept from this very folder, in
 * DATA_DIR or among the per-project folders under it.
 */
function lastGoodBuildFor(config: AppConfig): { buildId: string; project: Project } | undefined {
  let name: string | undefined;
  try {
    name = readProjectName(config.projectDir);
  } catch {
    name = undefined;
  }
  if (name !== undefined) {
    return lastGoodBuild(withProjectDataDir(config, name).config.dataDir, config.projectDir, name);
  }
  if (!config.dataDirPerProject) return lastGoodBuild(config.dataDir, config.projectDir);
  let folders: string[];
  try {
    folders = readdirSync(config.dataDir);
  } catch {
    return undefined;
  }
  for (const folder of folders) {
    const found = lastGoodBuild(join(config.dataDir, folder), config.projectDir);
    if (found?.project.name === folder) return found;
  }
  return undefined;
}

void main();
