import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { loadProject } from '@/core/project/project-loader';
import { ServedProject } from '@/core/project/served-project';

@Global()
@Module({
  providers: [
    {
      provide: ServedProject,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new ServedProject(loadProject(config.projectDir)),
    },
  ],
  exports: [ServedProject],
})
export class ProjectModule {}
