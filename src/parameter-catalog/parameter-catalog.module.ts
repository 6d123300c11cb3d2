import { Module } from '@nestjs/common';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';

/**
 * The parameter catalog of the environment served, one per process: every feature that takes selections
 * (datasets, dashboards, the data catalog, the parameter widgets, builds, admin queries, MCP) imports this.
 */
@Module({
  providers: [ParameterCatalogService],
  exports: [ParameterCatalogService],
})
export class ParameterCatalogModule {}
