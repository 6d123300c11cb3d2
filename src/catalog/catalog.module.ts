import { Module } from '@nestjs/common';
import { ProjectInfoController } from '@/catalog/project-info.controller';

@Module({ controllers: [ProjectInfoController] })
export class CatalogModule {}
