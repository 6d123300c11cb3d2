import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JsonLogger } from '@/http/request/json-logger';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Database } from '@/database/database';
import { logStaleLock } from '@/database/embedded-lock';
import { AccessTokensRepository } from '@/database/tables/access-tokens.repository';
import { AuditEventsRepository } from '@/database/tables/audit-events.repository';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import { EnvironmentStore } from '@/database/tables/environment-store';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { Transactions } from '@/database/tables/transactions';
import { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import { EmbedRevocationsRepository } from '@/database/tables/embed-revocations.repository';
import { TokenRecords } from '@/database/tables/token-records';
import { TOKEN_EPOCHS } from '@/cache/cache.module';
import type { Epochs } from '@/cache/redis-epoch';

/** One small repository per table; services hold the rules and call these by what they do. */
const REPOSITORIES = [
  UsersRepository,
  AccessTokensRepository,
  LoginFailuresRepository,
  AuditEventsRepository,
  BuildRunsRepository,
  EnvironmentStore,
  Transactions,
  WebhookDeliveriesRepository,
  EmbedRevocationsRepository,
];

@Global()
@Module({
  providers: [
    {
      provide: Database,
      inject: [APP_CONFIG, JsonLogger],
      useFactory: (config: AppConfig, logger: JsonLogger) =>
        Database.open({
          databaseUrl: config.databaseUrl,
          dataDir: config.dataDir,
          embedded: {
            command: 'server',
            onStaleLock: (holder) => logStaleLock(logger, holder),
          },
          migrate: true,
          waitMs: config.databaseWaitMs,
          onWait: (reason, waitedMs) =>
            logger.emit('warn', 'waiting for the database', { reason, waitedMs }),
        }),
    },
    { provide: DataSource, inject: [Database], useFactory: (db: Database) => db.dataSource },
    ...REPOSITORIES,
    {
      provide: TokenRecords,
      inject: [AccessTokensRepository, JsonLogger, { token: TOKEN_EPOCHS, optional: true }],
      useFactory: (tokens: AccessTokensRepository, logger: JsonLogger, epochs?: Epochs | null) =>
        new TokenRecords(
          (id) => tokens.findActive(id),
          epochs ?? null,
          (error, hint) =>
            logger.emit('error', 'token records change not announced', {
              error: error instanceof Error ? error.message : String(error),
              hint,
            }),
        ),
    },
  ],
  exports: [Database, DataSource, TokenRecords, ...REPOSITORIES],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(Database) private readonly database: Database) {}

  // Runs after the HTTP server has drained and after the modules that use the database have stopped.
  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}
