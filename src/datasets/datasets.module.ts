import { Global, Module } from '@nestjs/common';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';

@Global()
@Module({
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetsService],
  exports: [DatasetsService],
})
export class DatasetsModule {}
