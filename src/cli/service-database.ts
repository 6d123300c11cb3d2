import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliOutput } from '@/cli/cli-output';
import type { AppConfig } from '@/config/config';
import { userCaller, type Caller } from '@/core/caller';
import type { Project } from '@/core/project/project';
import { Database } from '@/database/database';
import {
  EmbeddedDatabaseInUseError,
  holderAlive,
  LockHolder,
  readLock,
} from '@/database/embedded/embedded-lock';
import { UsersRepository } from '@/database/tables/users.repository';

/** How long a server that holds the lock but has not published its ports yet (it is starting) is waited for. */
const PORT_WAIT_MS = 20_000;

/**
 * Opens the service's database for a command that writes to it (`drey users ...`), so that the change lands
 * where the service reads it and is never lost:
 * - with DATABASE_URL, that Postgres (migrated first, as a start would);
 * - with the embedded database and a process holding it (a running server), through that process's
 *   loopback port, named in the lock (embedded-lock.ts): one PGlite, one writer, and the change is seen at
 *   once; when that process cannot be reached, nothing is changed and the error names its pid;
 * - with the embedded database and nobody holding it, PGlite itself, under the same lock (a server started
 *   meanwhile refuses, naming this process).
 * The caller closes what it gets.
 */
export async function openServiceDatabase(
  config: AppConfig,
  command: string,
  output: CliOutput,
): Promise<Database> {
  if (config.databaseUrl) {
    return Database.open({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      migrate: true,
    });
  }
  // A few rounds at most: a server may take the lock between our look and our own attempt, or stop while
  // we wait for its port.
  for (let round = 0; ; round++) {
    const holder = readLock(config.dataDir);
    if (holder && holderAlive(holder)) {
      const through = await throughHolder(config, holder, output);
      if (through) return through;
      if (round < 2) continue;
    }
    try {
      return await Database.open({
        dataDir: config.dataDir,
        embedded: {
          command,
          onStaleLock: (stale) =>
            output.err(
              `(took over the lock of process ${stale.pid}, ${stale.command}, which no longer runs)`,
            ),
        },
        migrate: true,
      });
    } catch (error) {
      if (!(error instanceof EmbeddedDatabaseInUseError) || round >= 2) throw error;
    }
  }
}

async function throughHolder(
  config: AppConfig,
  found: LockHolder,
  output: CliOutput,
): Promise<Database | undefined> {
  const holder = await publishedBy(config.dataDir, found, 'port');
  if (!holder) return undefined;
  const refuse = (why: string) =>
    new Error(
      `The embedded database in ${config.dataDir} is held by process ${holder.pid} (${holder.command}, ` +
        `since ${holder.since}), ${why}. Nothing was changed: stop that process (kill ${holder.pid}) and ` +
        `run this again.`,
    );
  if (holder.port === undefined) throw refuse('which does not serve it yet');
  let database: Database;
  try {
    database = await Database.open({
      dataDir: config.dataDir,
      embeddedUrl: `postgres://postgres@127.0.0.1:${holder.port}/postgres`,
      // The holder migrated its schema when it started; a command of another version must not change it.
      migrate: false,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw refuse(`and its database could not be reached on 127.0.0.1:${holder.port} (${reason})`);
  }
  if (await database.dataSource.showMigrations()) {
    await database.close();
    throw refuse('whose database lacks migrations of this version (one checkout per version)');
  }
  output.err(`(through the database of the running ${holder.command}, pid ${holder.pid})`);
  return database;
}

/**
 * The holder once it has published `what` (a server publishes its database's port a few seconds into its
 * start, its HTTP origin once it listens); undefined when it stopped meanwhile. Gives up waiting after
 * {@link PORT_WAIT_MS} and returns the holder as it is then.
 */
export async function publishedBy(
  dataDir: string,
  holder: LockHolder,
  what: 'port' | 'http',
): Promise<LockHolder | undefined> {
  const deadline = Date.now() + PORT_WAIT_MS;
  let now: LockHolder | undefined = holder;
  while (now && now[what] === undefined && holderAlive(now) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    now = readLock(dataDir);
  }
  return now && holderAlive(now) ? now : undefined;
}

/**
 * The service's database for a command that only reads it (`run --as`), opened as {@link openServiceDatabase}
 * does (beside a running server, through its database); an embedded database that does not exist yet is not
 * created.
 */
export async function readServiceDatabase<T>(
  config: AppConfig,
  command: string,
  output: CliOutput,
  work: (database: Database) => Promise<T>,
): Promise<T> {
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pglite'))) {
    throw new Error(
      `there is no service database under ${config.dataDir} yet (no DATABASE_URL, no embedded ` +
        'database): start the server once, it creates the first administrator',
    );
  }
  const database = await openServiceDatabase(config, command, output);
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

/**
 * The caller `run --as <username>` runs for: that user's rights and fields as stored, with the defaults
 * of fields the project added since, exactly as a request with their token gets them (tokens.service.ts).
 */
export async function callerOf(
  config: AppConfig,
  project: Project,
  username: string,
  output: CliOutput,
): Promise<Caller> {
  const user = await readServiceDatabase(config, 'drey run --as', output, async (database) => {
    try {
      return await new UsersRepository(database.dataSource).findByUsername(username);
    } catch (error) {
      // 42P01, undefined table: a database no server has set up yet.
      if ((error as { code?: unknown }).code === '42P01') return null;
      throw error;
    }
  });
  if (!user) {
    const where = config.databaseUrl ? 'DATABASE_URL' : `the embedded one under ${config.dataDir}`;
    throw new Error(`there is no user "${username}" in the service's database (${where})`);
  }
  // The operator holds the database's rights and names the user: the caller is that user's, by the rule
  // a token of theirs resolves to (userCaller).
  return userCaller(user, project.userFields, null);
}
