import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { JsonLogger } from '@/runtime/json-logger';
import { SECRETS, Secrets } from '@/config/secrets';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, logger: JsonLogger, secrets: Secrets): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        { provide: SECRETS, useValue: secrets },
      ],
      exports: [APP_CONFIG, JsonLogger, SECRETS],
    };
  }
}
