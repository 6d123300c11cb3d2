import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { PROJECT } from '@/project/project.tokens';
import { loadProject } from '@/core/project/project-loader';

@Global()
@Module({
  providers: [
    {
      provide: PROJECT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => loadProject(config.projectDir),
    },
  ],
  exports: [PROJECT],
})
export class ProjectModule {}
