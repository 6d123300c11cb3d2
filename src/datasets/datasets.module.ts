import { Global, Module } from '@nestjs/common';
import { CacheModule } from '@/cache/cache.module';
import { DatasetResultCache } from '@/datasets/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { ResultsFrontDoor } from '@/datasets/results-front-door';

@Global()
@Module({
  imports: [CacheModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService, ResultsFrontDoor],
  exports: [DatasetsService, ResultsFrontDoor],
})
export class DatasetsModule {}
