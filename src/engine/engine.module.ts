import { Global, Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { JsonLogger } from '@/runtime/json-logger';
import { startupStep } from '@/runtime/startup-step';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Engine } from '@/engine/engine';
import { ServedProject } from '@/core/project/served-project';

@Global()
@Module({
  providers: [
    {
      provide: Engine,
      inject: [ServedProject, APP_CONFIG, JsonLogger],
      useFactory: (served: ServedProject, config: AppConfig, logger: JsonLogger) => {
        const engine: Engine = new Engine(served, {
          dataDir: config.dataDir,
          env: config.connectionEnv,
          maxRows: config.maxResultRows,
          queryTimeoutMs: config.queryTimeoutMs,
          limits: config.engine,
          // Once per build found: the data folder is shared with another project (DATA_DIR set to one
          // folder for both), or holds a build of an earlier version that did not record its project.
          onForeignBuild: (found) =>
            logger.emit('warn', 'build of another project not served', {
              buildId: found.buildId,
              builtFrom: found.identity ?? 'unknown (built by an earlier version)',
              serves: engine.environments.identity,
              served: engine.environments.currentId ?? null,
              dataDir: config.dataDir,
              hint: 'give each project its own DATA_DIR (by default .data/<project name>)',
            }),
        });
        return engine;
      },
    },
  ],
  exports: [Engine],
})
export class EngineModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  /** Opens the environment built last; without one, the builds service starts the first build. */
  async onModuleInit(): Promise<void> {
    startupStep(this.logger, 'opening the build served last');
    const opened = await this.engine.open();
    startupStep(this.logger, opened ? 'build opened' : 'no build yet: the first one starts', {
      buildId: this.engine.environments.currentId ?? null,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
