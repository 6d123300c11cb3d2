import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import type { Project } from '@/core/project/project';
import { loadProject } from '@/core/project/project-loader';
import { ServedProject } from '@/core/project/served-project';

@Global()
@Module({})
export class ProjectModule {
  /**
   * `project`: the project to start with, as the server read it before Nest started (main.ts: the folder's,
   * or the one kept with the last good build when the folder does not load), so that it is not read twice;
   * without it, the folder's (`drey mcp`, the in-process specs).
   */
  static forRoot(project?: Project): DynamicModule {
    return {
      module: ProjectModule,
      providers: [
        {
          provide: ServedProject,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) =>
            new ServedProject(project ?? loadProject(config.projectDir)),
        },
      ],
      exports: [ServedProject],
    };
  }
}
