import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { readPgliteTemplate } from '@/database/pglite-template';

/*
 * The embedded database's own thread (see embedded-postgres.ts): PGlite runs Postgres compiled to
 * WebAssembly, synchronously, on the thread that calls it. Here, opening it overlaps the main thread's
 * start-up, and its queries never block the main thread's event loop.
 */

/**
 * Opens the PGlite database in `dir`. A new one starts from the empty cluster that `npm ci` prepared
 * (see pglite-template.ts), which saves running initdb, the longest part of a first start; without a
 * template, or if it cannot be loaded, PGlite runs initdb itself.
 */
async function openPglite(dir: string): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  // With PGlite's default 128 MB of shared buffers, opening the database took twice as long as with 16 MB
  // (3.3 s against 1.5 s on a busy 2-CPU machine). Drey's own tables (users, tokens, builds, audit) are small.
  const options = { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] };
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  const template = fresh ? readPgliteTemplate() : undefined;
  mkdirSync(dir, { recursive: true });
  if (template) {
    try {
      return await PGlite.create(dir, { ...options, loadDataDir: new Blob([template]) });
    } catch {
      // A damaged template: start over with initdb on an empty folder.
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
  }
  return PGlite.create(dir, options);
}

/** A simple-protocol Query message ('Q'). */
function queryMessage(sql: string): Uint8Array {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const message = Buffer.alloc(5 + text.length);
  message.write('Q', 0, 'latin1');
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/** Runs one statement on the raw session; the caller holds PGlite's query lock. Throws its error. */
async function runRaw(db: PGlite, sql: string): Promise<void> {
  const chunks: Buffer[] = [];
  await db.execProtocolRawStream(queryMessage(sql), {
    onRawData: (data) => chunks.push(Buffer.from(data)),
  });
  const reply = Buffer.concat(chunks);
  for (let at = 0; at + 5 <= reply.length; at += 1 + reply.readInt32BE(at + 1)) {
    if (reply[at] !== 0x45) continue; // 'E': ErrorResponse, fields of a code byte and a C string
    const fields = reply.subarray(at + 5, at + 1 + reply.readInt32BE(at + 1)).toString('utf8');
    const text = fields.split('\0').find((field) => field.startsWith('M'));
    throw new Error(`${sql}: ${text ? text.slice(1) : 'failed'}`);
  }
}

/**
 * PGlite is one Postgres session, and pglite-socket hands that same session to each client connection in
 * turn. What a client leaves in it (named prepared statements, SET values, temporary tables, advisory locks,
 * an open transaction) would otherwise meet the next client: node-postgres' pool closes a connection idle for
 * 10 s, its next connection believes it has prepared nothing, and preparing the token lookup's named
 * statement again failed with `prepared statement "drey_token_lookup" already exists` on every request
 * carrying a token, until a restart. So, as a connection pooler does between clients, the session is reset
 * whenever a client connection begins: ROLLBACK if a transaction was left open, then DISCARD ALL.
 *
 * Ordering: the server dispatches 'connection' right after attaching the socket, before any of the new
 * client's bytes are handled (they go through a setImmediate and then the server's query queue, which runs
 * each message under PGlite's query lock). `runExclusive` takes a place in that lock's FIFO queue
 * synchronously, here, so the reset runs after whatever the previous client still had queued and before the
 * new client's startup message. Inside the lock, statements go straight to the protocol (`db.exec` would wait
 * for the lock it is already inside).
 */
function resetSessionPerConnection(
  server: EventTarget,
  db: PGlite,
  onFailure: (error: unknown) => void,
): void {
  server.addEventListener('connection', () => {
    db.runExclusive(async () => {
      if (db.isInTransaction()) await runRaw(db, 'ROLLBACK');
      await runRaw(db, 'DISCARD ALL');
    }).catch(onFailure);
  });
}

export interface WorkerReady {
  type: 'ready';
  port: number;
}

async function serve(dir: string): Promise<void> {
  // PGlite ships as ES modules only; this file compiles to CommonJS, so it is loaded with import().
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await openPglite(dir);
  // Port 0: the system picks a free one, which the main thread reads from the 'ready' message.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  // Not expected (a transaction is rolled back first); if it happens, the readiness check, which runs the
  // token lookup through the pool, reports what the client then meets.
  resetSessionPerConnection(server, db, (error) =>
    process.emitWarning(
      `embedded Postgres: resetting the session failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
  );
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  parentPort?.on('message', (message) => {
    if (message !== 'stop') return;
    void (async () => {
      await server.stop();
      await db.close();
      parentPort?.close();
    })();
  });
  parentPort?.postMessage({ type: 'ready', port } satisfies WorkerReady);
}

// A failure rejects unhandled, which ends the worker: the main thread gets it as the worker's 'error' event.
void serve((workerData as { dir: string }).dir);
