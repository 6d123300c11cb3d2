import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogLegacyController } from '@/catalog/catalog.legacy.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';

@Module({
  imports: [ParameterCatalogModule],
  controllers: [ProjectInfoController, CatalogController, CatalogLegacyController],
  providers: [CatalogService],
  exports: [CatalogService],
})
export class CatalogModule {}
