import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@/common/access.decorators';
import { ApiErrors, ApiJson, ApiProjectPath } from '@/common/api-docs';
import { COMMON_ERRORS } from '@/common/api-schemas';
import { CURRENT } from '@/common/routes';
import { SERVICE_VERSION } from '@/common/service-version';
import type { Project } from '@/core/project/project';
import { projectVersion } from '@/core/project/project';
import { PROJECT } from '@/project/project.tokens';

@ApiTags('project')
@ApiProjectPath()
@Controller(CURRENT)
export class ProjectInfoController {
  constructor(@Inject(PROJECT) private readonly project: Project) {}

  /** The project's name, version, label and description, and the version of this service. */
  @Public()
  @Get()
  @ApiJson('ProjectInfo', 'The project')
  @ApiErrors(...COMMON_ERRORS)
  info(): Record<string, string> {
    return {
      name: this.project.name,
      version: projectVersion(this.project),
      label: this.project.label,
      description: this.project.description,
      service_version: SERVICE_VERSION,
    };
  }
}
