import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { toDataCatalog } from '@/catalog/catalog.mapper';
import { CatalogService } from '@/catalog/catalog.service';
import { ApiErrors, ApiJson, ApiProjectPath, ApiOptionalToken } from '@/openapi/decorators';
import { COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT, currentPath } from '@/http/routes';
import { ServedProject } from '@/core/project/served-project';

@ApiTags('catalog')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
@Controller(CURRENT)
export class CatalogController {
  private readonly prefix: string;

  constructor(
    private readonly catalog: CatalogService,
    served: ServedProject,
  ) {
    this.prefix = currentPath(served.current);
  }

  /**
   * Parameters, datasets and dashboards the caller may open (public ones for anonymous callers);
   * connections, models and lineage for administrators.
   */
  @Get('data-catalog')
  @ApiJson('DataCatalog', 'The data catalog')
  @ApiErrors(...COMMON_ERRORS)
  async current(@CurrentCaller() caller: Caller): Promise<Record<string, unknown>> {
    return toDataCatalog(await this.catalog.catalog(caller), this.prefix);
  }
}
