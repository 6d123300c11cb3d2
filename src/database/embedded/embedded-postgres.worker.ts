import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { SessionGate } from '@/database/embedded/embedded-session-gate';
import { readPgliteTemplate } from '@/database/embedded/pglite-template';
import { currentThreadId } from '@/runtime/background-threads';

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
  // Small shared buffers: PGlite's default 128 MB made opening the database twice as slow (see
  // docs/performance.md, "Figures behind the code", "PGlite's shared buffers"), and Drey's own tables
  // (users, tokens, builds, audit) are small.
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

export interface WorkerReady {
  type: 'ready';
  port: number;
  /** This thread's id, which the server keeps at the event loop's priority (BackgroundThreads). */
  threadId?: number;
}

/**
 * Clients at once: the server's pool (one connection) and a command line writing beside it, with room for a
 * pool reconnecting while its old connection is still being closed. Past it, a connection is refused.
 */
const MAX_CONNECTIONS = 8;

async function serve(dir: string): Promise<void> {
  // PGlite ships as ES modules only; this file compiles to CommonJS, so it is loaded with import().
  const { PGLiteSocketHandler } = await import('@electric-sql/pglite-socket');
  const db = await openPglite(dir);
  // pglite-socket's handler speaks the protocol on each socket; the session gate decides whose turn it is
  // (embedded-session-gate.ts). Not expected to fail (a transaction is rolled back first); if it does, the
  // readiness check, which runs the token lookup through the pool, reports what the client then meets.
  const gate = new SessionGate(
    db,
    (sql) => runRaw(db, sql),
    (error) =>
      process.emitWarning(
        `embedded Postgres: resetting the session failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
  );
  const handlers = new Set<InstanceType<typeof PGLiteSocketHandler>>();
  let stopping = false;
  const server = createServer((socket) => {
    if (stopping || handlers.size >= MAX_CONNECTIONS) {
      socket.end('Too many connections\n');
      return;
    }
    const handler = new PGLiteSocketHandler({
      // The handler calls enqueue, clearQueueForHandler and clearTransactionIfNeeded, which the gate has;
      // the declared type is pglite-socket's own queue class, whose private fields no other class can match.
      queryQueue: gate as unknown as ConstructorParameters<
        typeof PGLiteSocketHandler
      >[0]['queryQueue'],
      closeOnDetach: true,
    });
    handlers.add(handler);
    const forget = () => handlers.delete(handler);
    handler.addEventListener('close', forget);
    handler.addEventListener('error', forget);
    // Before any of its bytes are handled (they go through a setImmediate in the handler).
    gate.opened(handler.handlerId);
    handler.attach(socket).catch(() => socket.destroy());
  });
  // Port 0: the system picks a free one, which the main thread reads from the 'ready' message.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  parentPort?.on('message', (message) => {
    if (message !== 'stop') return;
    stopping = true;
    void (async () => {
      for (const handler of handlers) await handler.detach(true);
      await new Promise((resolve) => server.close(resolve));
      await db.close();
      parentPort?.close();
    })();
  });
  parentPort?.postMessage({
    type: 'ready',
    port,
    threadId: currentThreadId(),
  } satisfies WorkerReady);
}

// A failure rejects unhandled, which ends the worker: the main thread gets it as the worker's 'error' event.
void serve((workerData as { dir: string }).dir);
