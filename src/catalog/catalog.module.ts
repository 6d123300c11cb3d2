import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';
import { ProjectListingController } from '@/catalog/project-listing.controller';

@Module({
  controllers: [ProjectInfoController, ProjectListingController, CatalogController],
  providers: [CatalogService],
})
export class CatalogModule {}
