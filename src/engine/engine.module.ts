import { Global, Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Engine } from '@/engine/engine';
import { ServedProject } from '@/core/project/served-project';

@Global()
@Module({
  providers: [
    {
      provide: Engine,
      inject: [ServedProject, APP_CONFIG],
      useFactory: (served: ServedProject, config: AppConfig) =>
        new Engine(served, {
          dataDir: config.dataDir,
          env: config.connectionEnv,
          maxRows: config.maxResultRows,
          queryTimeoutMs: config.queryTimeoutMs,
          limits: config.engine,
        }),
    },
  ],
  exports: [Engine],
})
export class EngineModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(Engine) private readonly engine: Engine) {}

  /** Opens the environment built last; without one, the builds service starts the first build. */
  async onModuleInit(): Promise<void> {
    await this.engine.open();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
