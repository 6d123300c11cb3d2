import { Global, Inject, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { RedisSharedResults } from '@/cache/redis-shared-results';
import type { SharedResults } from '@/cache/shared-results';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Epochs, RedisEpoch } from '@/cache/redis-epoch';

/** Injection token of the {@link SharedResults} store; null without Redis (each process caches alone). */
export const SHARED_RESULTS = Symbol('SHARED_RESULTS');

/**
 * Injection token of the {@link Epochs} of token records (TokenRecords); null without Redis, where no
 * process keeps them.
 */
export const TOKEN_EPOCHS = Symbol('TOKEN_EPOCHS');

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
    {
      provide: TOKEN_EPOCHS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Epochs | null =>
        config.redisUrl
          ? new RedisEpoch(config.redisUrl, `${config.redisPrefix}:token-records`)
          : null,
    },
  ],
  exports: [SHARED_RESULTS, TOKEN_EPOCHS],
})
export class CacheModule implements OnApplicationShutdown {
  constructor(
    @Optional() @Inject(SHARED_RESULTS) private readonly shared: SharedResults | null,
    @Optional() @Inject(TOKEN_EPOCHS) private readonly epochs: Epochs | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.shared?.close();
    await this.epochs?.close();
  }
}
