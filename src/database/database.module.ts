import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { Database } from '@/database/database';

@Global()
@Module({
  providers: [
    {
      provide: Database,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        Database.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrate: true }),
    },
    { provide: DataSource, inject: [Database], useFactory: (db: Database) => db.dataSource },
  ],
  exports: [Database, DataSource],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(Database) private readonly database: Database) {}

  // Runs after the HTTP server has drained and after the modules that use the database have stopped.
  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}
