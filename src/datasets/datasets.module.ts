import { Module } from '@nestjs/common';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParameterWidgetsModule } from '@/parameter-widgets/parameter-widgets.module';

@Module({
  imports: [MetricsModule, ParameterWidgetsModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService],
  exports: [DatasetsService],
})
export class DatasetsModule {}
