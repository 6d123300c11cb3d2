import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/common/access.decorators';
import type { Caller } from '@/core/caller';
import { CatalogService } from '@/catalog/catalog.service';
import { ApiErrors, ApiJson, ApiLegacyErrors, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { COMMON_ERRORS } from '@/common/api-schemas';
import { CURRENT, LEGACY } from '@/common/routes';

@ApiTags('catalog')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@Controller()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  /**
   * Parameters, datasets and dashboards the caller may open (public ones for anonymous callers);
   * connections, models and lineage for administrators.
   */
  @Get(`${CURRENT}/data-catalog`)
  @ApiJson('DataCatalog', 'The data catalog')
  @ApiErrors(...COMMON_ERRORS)
  current(@CurrentCaller() caller: Caller): Promise<Record<string, unknown>> {
    return this.catalog.catalog(caller);
  }

  /** Legacy catalog: datasets and dashboards only, with legacy paths. */
  @ApiTags('legacy')
  @Get(`${LEGACY}/data-catalog`)
  @ApiJson('LegacyDataCatalog', 'The legacy data catalog')
  @ApiLegacyErrors(...COMMON_ERRORS)
  legacy(@CurrentCaller() caller: Caller): Record<string, unknown> {
    return this.catalog.legacyCatalog(caller);
  }
}
