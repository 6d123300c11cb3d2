import { Module } from '@nestjs/common';
import { DatasetResultCache } from '@/datasets/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { ResultsFrontDoor } from '@/datasets/results-front-door';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParametersModule } from '@/parameters/parameters.module';

@Module({
  imports: [MetricsModule, ParametersModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService, ResultsFrontDoor],
  exports: [DatasetsService, ResultsFrontDoor],
})
export class DatasetsModule {}
