import { Global, Inject, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { RedisSharedResults } from '@/cache/redis-shared-results';
import type { SharedResults } from '@/cache/shared-results';
import { APP_CONFIG, AppConfig } from '@/config/config';

/** Injection token of the {@link SharedResults} store; null without Redis (each process caches alone). */
export const SHARED_RESULTS = Symbol('SHARED_RESULTS');

@Global()
@Module({
  providers: [
    {
      provide: SHARED_RESULTS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): SharedResults | null =>
        config.redisUrl
          ? new RedisSharedResults(config.redisUrl, config.redisPrefix, {
              maxBytes: config.resultCacheRedisBytes,
            })
          : null,
    },
  ],
  exports: [SHARED_RESULTS],
})
export class CacheModule implements OnApplicationShutdown {
  constructor(@Optional() @Inject(SHARED_RESULTS) private readonly shared: SharedResults | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.shared?.close();
  }
}
