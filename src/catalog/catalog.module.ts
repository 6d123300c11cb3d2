import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogLegacyController } from '@/catalog/catalog.legacy.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';
import { ParameterWidgetsModule } from '@/parameter-widgets/parameter-widgets.module';

@Module({
  imports: [ParameterWidgetsModule],
  controllers: [ProjectInfoController, CatalogController, CatalogLegacyController],
  providers: [CatalogService],
  exports: [CatalogService],
})
export class CatalogModule {}
