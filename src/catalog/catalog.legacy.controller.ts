import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth, Public } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { toLegacyDataCatalog, toProjectListing } from '@/legacy/catalog';
import { CatalogService } from '@/catalog/catalog.service';
import { ApiJson, ApiLegacyErrors, ApiProjectPath, ApiOptionalToken } from '@/openapi/decorators';
import { COMMON_ERRORS } from '@/openapi/common-schemas';
import { LEGACY, LEGACY_ROOT, legacyPath } from '@/legacy/routes';
import { ServedProject } from '@/core/project/served-project';

/**
 * The legacy layout's project listing (which the 0.4 testing UI loads first) and data catalog. Their
 * operation ids are those they had before the catalog's controllers were split by layout: Swagger UI's
 * anchors and clients generated from the document name operations by them.
 */
@ApiTags('legacy')
@Controller()
export class CatalogLegacyController {
  private readonly prefix: string;

  constructor(
    private readonly catalog: CatalogService,
    private readonly served: ServedProject,
  ) {
    // The paths are fixed at start (a build may not rename the project).
    this.prefix = legacyPath(served.current);
  }

  /** The served project with its major version and the legacy paths of its login and data catalog. */
  @Public()
  @ApiOptionalToken()
  @Get(LEGACY_ROOT)
  @ApiOperation({ operationId: 'ProjectListingController_listing' })
  @ApiJson('ProjectListing', 'The served project')
  @ApiLegacyErrors(400, 401, 500, 503)
  listing(): Record<string, unknown> {
    return toProjectListing(this.served.current);
  }

  /** Legacy catalog: datasets and dashboards only, with legacy paths. */
  @ApiTags('catalog')
  @ApiProjectPath()
  @ApiOptionalToken()
  @OptionalAuth()
  @Get(`${LEGACY}/data-catalog`)
  @ApiOperation({ operationId: 'CatalogController_legacy' })
  @ApiJson('LegacyDataCatalog', 'The legacy data catalog')
  @ApiLegacyErrors(...COMMON_ERRORS)
  legacy(@CurrentCaller() caller: Caller): Record<string, unknown> {
    return toLegacyDataCatalog(this.catalog.openItems(caller), this.prefix);
  }
}
