import { Module } from '@nestjs/common';
import { AdminController } from '@/admin/admin.controller';
import { QueryModelsService } from '@/admin/query-models.service';
import { AuditModule } from '@/audit/audit.module';
import { BuildsModule } from '@/builds/builds.module';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';

@Module({
  imports: [AuditModule, BuildsModule, ParameterCatalogModule],
  controllers: [AdminController],
  providers: [QueryModelsService],
  exports: [QueryModelsService],
})
export class AdminModule {}
