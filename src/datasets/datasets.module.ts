import { Module } from '@nestjs/common';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';

@Module({
  imports: [MetricsModule, ParameterCatalogModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService],
  exports: [DatasetsService],
})
export class DatasetsModule {}
