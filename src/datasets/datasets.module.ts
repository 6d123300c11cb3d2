import { Module } from '@nestjs/common';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { DatasetReplies } from '@/datasets/dataset-replies';
import { DatasetExports } from '@/datasets/dataset-exports';
import { ExportLinks } from '@/datasets/export-links';
import { AuditModule } from '@/audit/audit.module';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';

@Module({
  imports: [AuditModule, MetricsModule, ParameterCatalogModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService, DatasetExports, DatasetReplies, ExportLinks],
  exports: [DatasetsService, ExportLinks],
})
export class DatasetsModule {}
