import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@/auth/auth.decorators';
import type { Project } from '@/project/project';
import { projectVersion } from '@/project/project';
import { PROJECT } from '@/project/project.tokens';

/** `GET /service-v0`: the 0.4 service's project listing, which the 0.4 testing UI loads first. */
@ApiTags('legacy')
@Controller('service-v0')
export class ProjectListingController {
  constructor(@Inject(PROJECT) private readonly project: Project) {}

  /**
   * The served project with its one major version and the legacy paths of its token and data catalog
   * endpoints. A project has no minor versions of its own, so `minor_versions` is `[0]`.
   */
  @Public()
  @Get()
  listing(): Record<string, unknown> {
    const legacy = `/service-v0/${this.project.name}/${projectVersion(this.project)}`;
    return {
      name: this.project.name,
      label: this.project.label,
      versions: [
        {
          major_version: this.project.majorVersion,
          minor_versions: [0],
          token_path: `${legacy}/token`,
          data_catalog_path: `${legacy}/data-catalog`,
        },
      ],
    };
  }
}
