import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@/http/access/access.decorators';
import { ApiErrors, ApiJson, ApiOptionalToken, ApiProjectPath } from '@/openapi/decorators';
import { COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { SERVICE_VERSION } from '@/config/service-version';
import { projectVersion } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

@ApiTags('project')
@ApiProjectPath()
@Controller(CURRENT)
export class ProjectInfoController {
  constructor(private readonly served: ServedProject) {}

  /** The project's name, version, label and description, and the version of this service. */
  @Public()
  @ApiOptionalToken()
  @Get()
  @ApiJson('ProjectInfo', 'The project')
  @ApiErrors(...COMMON_ERRORS)
  info(): Record<string, string> {
    return {
      name: this.served.current.name,
      version: projectVersion(this.served.current),
      label: this.served.current.label,
      description: this.served.current.description,
      service_version: SERVICE_VERSION,
    };
  }
}
