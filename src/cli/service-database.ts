import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '@/config/config';
import type { Caller } from '@/core/caller';
import type { Project } from '@/core/project/project';
import { Database } from '@/database/database';
import { UsersRepository } from '@/database/tables/users.repository';
import { withFieldDefaults } from '@/users/user-fields.rules';

/**
 * The one door through which a read-only CLI command opens the service's database: DATABASE_URL, or the
 * embedded database under DATA_DIR. Migrations are not run (reading must not change the schema) and an
 * embedded database that does not exist yet is not created.
 *
 * Kept this small on purpose: the embedded database may be open in a running server, and how the CLI
 * reaches it then (through that server's lock) is decided in one module that replaces this function.
 */
export async function readServiceDatabase<T>(
  config: AppConfig,
  work: (database: Database) => Promise<T>,
): Promise<T> {
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pglite'))) {
    throw new Error(
      `there is no service database under ${config.dataDir} yet (no DATABASE_URL, no embedded ` +
        'database): start the server once, it creates the first administrator',
    );
  }
  const database = await Database.open({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    migrate: false,
  });
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
): Promise<Caller> {
  const user = await readServiceDatabase(config, async (database) => {
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
  return {
    username: user.username,
    userId: user.id,
    isAdmin: user.isAdmin,
    fields: withFieldDefaults(user.fields, project.userFields),
    tokenId: null,
  };
}
