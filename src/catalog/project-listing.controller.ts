import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@/common/access.decorators';
import { CatalogService } from '@/catalog/catalog.service';
import { ApiJson, ApiLegacyErrors } from '@/common/api-docs';

/** `GET /service-v0`: the 0.4 service's project listing, which the 0.4 testing UI loads first. */
@ApiTags('legacy')
@Controller('service-v0')
export class ProjectListingController {
  constructor(private readonly catalog: CatalogService) {}

  /** The served project with its major version and the legacy paths of its login and data catalog. */
  @Public()
  @Get()
  @ApiJson('ProjectListing', 'The served project')
  @ApiLegacyErrors(401, 500, 503)
  listing(): Record<string, unknown> {
    return this.catalog.listing();
  }
}
