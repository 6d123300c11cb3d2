import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { JsonLogger } from '@/common/json-logger';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, logger: JsonLogger): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
      ],
      exports: [APP_CONFIG, JsonLogger],
    };
  }
}
