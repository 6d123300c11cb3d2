import { Module } from '@nestjs/common';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { DatasetReplies } from '@/datasets/dataset-replies';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParametersModule } from '@/parameter-widgets/parameters.module';

@Module({
  imports: [MetricsModule, ParametersModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService, DatasetReplies],
  exports: [DatasetsService],
})
export class DatasetsModule {}
