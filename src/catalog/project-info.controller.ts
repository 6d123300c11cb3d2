import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@/http/access/access.decorators';
import { ApiErrors, ApiJson, ApiOptionalToken, ApiProjectPath } from '@/openapi/decorators';
import { COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { SERVICE_VERSION } from '@/config/service-version';
import type { Project } from '@/core/project/project';
import { projectVersion } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

@ApiTags('project')
@ApiProjectPath()
@Controller(CURRENT)
export class ProjectInfoController {
  /** The project being served now (a build may replace it): read per use, never kept. */
  private get project(): Project {
    return this.served.current;
  }

  constructor(private readonly served: ServedProject) {}

  /** The project's name, version, label and description, and the version of this service. */
  @Public()
  @ApiOptionalToken()
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
