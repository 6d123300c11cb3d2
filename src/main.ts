// First: V8 makes its first pretenuring decisions while the modules below load.
import '@/runtime/heap-policy';
import 'reflect-metadata';
import { JsonLogger } from '@/runtime/json-logger';
import { SERVICE_VERSION } from '@/config/service-version';
import { AppConfig, ConfigError, loadConfig } from '@/config/config';
import { withProjectDataDir } from '@/config/data-dir';
import { EnvFileError, loadEnvFile } from '@/config/env-file';
import { EmbeddedDatabaseInUseError, logStaleLock } from '@/database/embedded/embedded-lock';
import { startEmbeddedPostgres } from '@/database/embedded/embedded-postgres';
import { ProjectError } from '@/core/project-errors';
import { loadProject } from '@/core/project/project-loader';

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
  // The project is checked before Nest starts, so that an invalid one is the clean list of its problems
  // (Nest would log the error with a stack trace first, from the module that loads it).
  let earlierState: string | undefined;
  try {
    // The data folder is the project's own unless DATA_DIR says otherwise: known once its name is.
    ({ config, earlierState } = withProjectDataDir(config, loadProject(config.projectDir).name));
  } catch (error) {
    if (error instanceof ProjectError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // The embedded database opens in its own thread while this one loads the application's modules (a few
  // seconds together); Database.open then takes the database this started. Its errors surface there.
  // It takes the folder's lock first: a folder another process has open is refused, naming that process.
  if (!config.databaseUrl) {
    try {
      startEmbeddedPostgres(config.dataDir, {
        command: 'server',
        onStaleLock: (holder) => logStaleLock(logger, holder),
      }).catch(() => undefined);
    } catch (error) {
      if (error instanceof EmbeddedDatabaseInUseError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(1);
      }
      throw error;
    }
  }
  const { createApp } = await import('./app');
  const { installShutdown } = await import('./runtime/shutdown');
  if (earlierState) {
    logger.emit('warn', 'data folder of an earlier version not used', { hint: earlierState });
  }
  try {
    const app = await createApp(config, logger);
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
    await app.listen(config.port, config.host);
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

void main();
