import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@/config/config';
import { BUILDS_QUEUE, BuildQueue, InProcessBuildQueue } from '@/builds/build-queue';
import { BullBuildQueue } from '@/builds/bullmq-build-queue';
import { BuildsProcessor } from '@/builds/builds.processor';
import { BuildsService } from '@/builds/builds.service';
import { redisConnection } from '@/common/redis';

@Module({})
export class BuildsModule {
  /** BullMQ on Redis when REDIS_URL is set; otherwise the in-process queue behind the same interface. */
  static register(config: AppConfig): DynamicModule {
    if (config.redisUrl) {
      return {
        module: BuildsModule,
        global: true,
        imports: [
          BullModule.forRoot({
            connection: redisConnection(config.redisUrl),
            prefix: config.redisPrefix,
          }),
          BullModule.registerQueue({ name: BUILDS_QUEUE }),
        ],
        providers: [
          BullBuildQueue,
          BuildsProcessor,
          { provide: BuildQueue, useExisting: BullBuildQueue },
          BuildsService,
        ],
        exports: [BuildQueue, BuildsService],
      };
    }
    return {
      module: BuildsModule,
      global: true,
      providers: [{ provide: BuildQueue, useClass: InProcessBuildQueue }, BuildsService],
      exports: [BuildQueue, BuildsService],
    };
  }
}
