import { DataSource } from 'typeorm';
import { isUnavailable } from '@/runtime/outages';
import { ENTITIES, MIGRATIONS } from '@/database/schema';
import {
  EmbeddedOptions,
  EmbeddedPostgres,
  startEmbeddedPostgres,
} from '@/database/embedded/embedded-postgres';

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Without `databaseUrl`: who opens the embedded database, for its lock (embedded-lock.ts). */
  embedded?: EmbeddedOptions;
  /**
   * The loopback URL of an embedded database that another process (a running server) holds and serves:
   * used as that process's own pool uses it, one connection, and never stopped from here.
   */
  embeddedUrl?: string;
  /** Runs pending migrations after connecting. */
  migrate: boolean;
  /**
   * How long a server that cannot be reached yet is waited for (a container started beside its database,
   * a failover): connection errors are tried again once a second until then. 0: the first error is final.
   */
  waitMs?: number;
  /** Told of each failed try while waiting. */
  onWait?: (reason: string, waitedMs: number) => void;
}

/** An open database: the TypeORM data source and, in embedded mode, the PGlite behind it. */
export class Database {
  private constructor(
    readonly dataSource: DataSource,
    readonly kind: 'postgres' | 'embedded',
    private readonly embedded?: EmbeddedPostgres,
    /** The migrations this open applied (none once the schema is current). */
    readonly migrationsApplied: string[] = [],
  ) {}

  static async open(options: DatabaseOptions): Promise<Database> {
    const started = Date.now();
    for (;;) {
      try {
        return await Database.openOnce(options);
      } catch (error) {
        const waited = Date.now() - started;
        if (!options.databaseUrl || !isUnavailable(error) || waited >= (options.waitMs ?? 0))
          throw error;
        options.onWait?.(error instanceof Error ? error.message : String(error), waited);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private static async openOnce(options: DatabaseOptions): Promise<Database> {
    const embedded =
      options.databaseUrl || options.embeddedUrl
        ? undefined
        : await startEmbeddedPostgres(options.dataDir, options.embedded ?? { command: 'drey' });
    const single = embedded !== undefined || options.embeddedUrl !== undefined;
    const dataSource = new DataSource({
      type: 'postgres',
      url: options.databaseUrl ?? options.embeddedUrl ?? embedded?.url,
      entities: ENTITIES,
      migrations: MIGRATIONS,
      synchronize: false,
      migrationsRun: false,
      // PGlite is one session, which the embedded server hands to one client at a time (a command line may
      // be a second client: embedded-session-gate.ts). The pool still closes its connection after 10 s idle
      // (pg's default) and connects again later: the embedded server resets the session between clients.
      extra: single
        ? { max: 1 }
        : {
            max: 10,
            // Above 5 s, glibc's resolver timeout: when one DNS answer is lost (seen in the container test
            // as a neighbour container stopped and the network's DNS reloaded), the lookup of the database's
            // host name is retried after 5 s, and a 5 s limit on connecting made that request a 503.
            connectionTimeoutMillis: 10000,
            idleTimeoutMillis: 30000,
            keepAlive: true,
            query_timeout: 15000,
          },
    });
    let applied: string[] = [];
    try {
      await dataSource.initialize();
      if (options.migrate) applied = await migrate(dataSource, !single);
    } catch (error) {
      if (dataSource.isInitialized) await dataSource.destroy();
      await embedded?.stop();
      throw error;
    }
    return new Database(dataSource, single ? 'embedded' : 'postgres', embedded, applied);
  }

  /**
   * Closes the pool. A connection broken during an outage may never be handed back to the pool, and the
   * pool would then wait for it forever: past a few seconds, shutdown goes on without it.
   */
  async close(timeoutMs = 3000): Promise<void> {
    if (this.dataSource.isInitialized) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([this.dataSource.destroy(), timeout]);
      clearTimeout(timer);
    }
    await this.embedded?.stop();
  }
}

// Several server processes may start at once on one Postgres: an advisory lock lets one migrate at a time.
const MIGRATION_LOCK = 4465_0001;

async function migrate(dataSource: DataSource, lock: boolean): Promise<string[]> {
  if (!lock) {
    return (await dataSource.runMigrations({ transaction: 'each' })).map((done) => done.name);
  }
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return (await dataSource.runMigrations({ transaction: 'each' })).map((done) => done.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
