import { Module } from '@nestjs/common';
import { CatalogController } from '@/catalog/catalog.controller';
import { CatalogService } from '@/catalog/catalog.service';
import { ProjectInfoController } from '@/catalog/project-info.controller';

@Module({ controllers: [ProjectInfoController, CatalogController], providers: [CatalogService] })
export class CatalogModule {}
