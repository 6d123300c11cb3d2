import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JsonLogger } from '@/runtime/json-logger';
import { startupStep } from '@/runtime/startup-step';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Database } from '@/database/database';
import { logStaleLock } from '@/database/embedded/embedded-lock';
import { AccessTokensRepository } from '@/database/tables/access-tokens.repository';
import { AuditEventsRepository } from '@/database/tables/audit-events.repository';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import { EnvironmentStore } from '@/database/environment-store';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { Transactions } from '@/database/transactions/transactions';
import { WebhookDeliveriesRepository } from '@/database/tables/webhook-deliveries.repository';
import { EmbedRevocationsRepository } from '@/database/tables/embed-revocations.repository';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { TokenRecords } from '@/database/token-records/token-records';
import { PostgresTokenChanges } from '@/database/token-records/token-changes';
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
  OAuthRecordsRepository,
];

@Global()
@Module({
  providers: [
    {
      provide: Database,
      inject: [APP_CONFIG, JsonLogger],
      useFactory: async (config: AppConfig, logger: JsonLogger) => {
        startupStep(logger, 'opening the database', {
          database: config.databaseUrl ? 'postgres' : 'embedded',
        });
        const database = await Database.open({
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
        });
        startupStep(logger, 'database open, its schema current', {
          migrationsApplied: database.migrationsApplied.length,
        });
        return database;
      },
    },
    { provide: DataSource, inject: [Database], useFactory: (db: Database) => db.dataSource },
    ...REPOSITORIES,
    {
      provide: TokenRecords,
      inject: [
        AccessTokensRepository,
        JsonLogger,
        Database,
        APP_CONFIG,
        { token: TOKEN_EPOCHS, optional: true },
      ],
      useFactory: (
        tokens: AccessTokensRepository,
        logger: JsonLogger,
        database: Database,
        config: AppConfig,
        epochs?: Epochs | null,
      ) => {
        // Records are kept only with Redis; the embedded database has no other server process to tell.
        const changes =
          epochs && database.kind === 'postgres' && config.databaseUrl
            ? new PostgresTokenChanges(
                config.databaseUrl,
                async (channel, payload) => {
                  await database.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
                },
                (error) =>
                  logger.emit('warn', 'token changes listener lost', {
                    error: error instanceof Error ? error.message : String(error),
                    hint: 'token records are read from Postgres on every request until it listens again',
                  }),
              )
            : null;
        changes?.start();
        return new TokenRecords(
          (id) => tokens.findActive(id),
          epochs ?? null,
          (error, hint, level) =>
            logger.emit(level, 'token records change not announced through Redis', {
              error: error instanceof Error ? error.message : String(error),
              hint,
            }),
          changes,
        );
      },
    },
  ],
  exports: [Database, DataSource, TokenRecords, ...REPOSITORIES],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(TokenRecords) private readonly tokenRecords: TokenRecords,
  ) {}

  // Runs after the HTTP server has drained and after the modules that use the database have stopped.
  async onApplicationShutdown(): Promise<void> {
    await this.tokenRecords.close();
    await this.database.close();
  }
}
