import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** A PGlite database under DATA_DIR, served on a loopback port so `pg` and TypeORM use it unchanged. */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  // PGlite ships as ES modules only; this file compiles to CommonJS, so it is loaded with import().
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
