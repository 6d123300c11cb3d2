import { Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { CacheModule } from '@/cache/cache.module';
import { CURRENT, LEGACY } from '@/common/routes';
import { DatasetResultCache } from '@/datasets/dataset-result-cache';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { KeptResultsMiddleware } from '@/datasets/kept-results.middleware';

@Global()
@Module({
  imports: [CacheModule],
  controllers: [DatasetsController, DatasetsLegacyController],
  providers: [DatasetResultCache, DatasetsService, KeptResultsMiddleware],
  exports: [DatasetsService],
})
export class DatasetsModule implements NestModule {
  /** Repeated GETs of results are answered before Nest's routing (see KeptResultsMiddleware). */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(KeptResultsMiddleware)
      .forRoutes(
        { path: `${CURRENT}/datasets/:dataset/results`, method: RequestMethod.GET },
        { path: `${LEGACY}/dataset/:name`, method: RequestMethod.GET },
      );
  }
}
