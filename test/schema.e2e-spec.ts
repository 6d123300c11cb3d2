import { runDist } from './support/dist';
import { createTestDatabase, tempDir } from './support/services';

// What TypeORM's synchronize would still run after the committed migrations: nothing, if the two agree.
const CHECK = `
const { Database } = require('./dist/database/database.js');
(async () => {
  const database = await Database.open({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: process.env.DATA_DIR, migrate: true });
  const pending = await database.dataSource.driver.createSchemaBuilder().log();
  const unapplied = await database.dataSource.showMigrations();
  await database.close();
  console.log(JSON.stringify({ kind: database.kind, pending: pending.upQueries.map((q) => q.query), unapplied }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

interface Check {
  kind: string;
  pending: string[];
  unapplied: boolean;
}

describe('database schema', () => {
  it('the committed migrations create exactly what the entities describe, on Postgres', async () => {
    const database = await createTestDatabase();
    const dir = tempDir();
    try {
      const result = await runDist<Check>(CHECK, {
        DATABASE_URL: database.url,
        DATA_DIR: dir.path,
      });
      expect(result).toEqual({ kind: 'postgres', pending: [], unapplied: false });
    } finally {
      await database.drop();
      dir.remove();
    }
  });

  it('and on the embedded PGlite database', async () => {
    const dir = tempDir();
    try {
      const result = await runDist<Check>(CHECK, { DATA_DIR: dir.path });
      expect(result).toEqual({ kind: 'embedded', pending: [], unapplied: false });
    } finally {
      dir.remove();
    }
  });

  it('lets several processes migrate one database at once', async () => {
    const database = await createTestDatabase();
    const dirs = [tempDir(), tempDir(), tempDir()];
    try {
      const results = await Promise.all(
        dirs.map((dir) =>
          runDist<Check>(CHECK, { DATABASE_URL: database.url, DATA_DIR: dir.path }),
        ),
      );
      for (const result of results) expect(result.pending).toEqual([]);
    } finally {
      await database.drop();
      dirs.forEach((dir) => dir.remove());
    }
  });
});
