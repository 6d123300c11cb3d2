import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';
import { ProjectListingController } from '@/catalog/project-listing.controller';
import { ParametersModule } from '@/parameters/parameters.module';

@Module({
  imports: [ParametersModule],
  controllers: [ProjectInfoController, ProjectListingController, CatalogController],
  providers: [CatalogService],
})
export class CatalogModule {}
