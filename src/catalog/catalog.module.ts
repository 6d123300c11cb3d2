import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogLegacyController } from '@/catalog/catalog.legacy.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';

@Module({
  controllers: [ProjectInfoController, CatalogController, CatalogLegacyController],
  providers: [CatalogService],
})
export class CatalogModule {}
