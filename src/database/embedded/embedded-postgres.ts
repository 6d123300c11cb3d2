import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { acquireLock, EmbeddedLock, OnStale } from '@/database/embedded/embedded-lock';
import type { WorkerReady } from '@/database/embedded/embedded-postgres.worker';
import { keepPriority } from '@/runtime/background-threads';

/** A PGlite database under DATA_DIR, served on a loopback port so `pg` and TypeORM use it unchanged. */
export interface EmbeddedPostgres {
  url: string;
  /** Names, in the folder's lock, where this process (a server) answers HTTP (see LockHolder.http). */
  publishHttp(origin: string, prefix: string): void;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Who opens it, as the lock names it: `server`, `drey users reset-password`, ... */
  command: string;
  /** Told when the lock of a process that no longer runs is taken over. */
  onStaleLock?: OnStale;
}

/** Starts of the embedded database, by data folder: main.ts starts it early, Database.open takes it. */
const started = new Map<string, Promise<EmbeddedPostgres>>();

/**
 * Starts the embedded database in a worker thread (embedded-postgres.worker.ts) and resolves once it
 * accepts connections. A second call for the same folder returns the first one's start: main.ts calls this
 * before loading the application's modules, so that opening PGlite (a second or two of WebAssembly) runs
 * beside the loading of the modules instead of after it. The folder's lock (embedded-lock.ts) is taken
 * first: a folder another live process has open is refused (thrown, not rejected), naming that process.
 */
export function startEmbeddedPostgres(
  dataDir: string,
  options: EmbeddedOptions,
): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pglite');
  let start = started.get(dir);
  if (!start) {
    // Taken synchronously: a refusal throws here, before anything else starts.
    start = startWorker(dir, acquireLock(dataDir, options.command, options.onStaleLock));
    started.set(dir, start);
    start.catch(() => started.delete(dir));
  }
  return start;
}

function startWorker(dir: string, lock: EmbeddedLock): Promise<EmbeddedPostgres> {
  // The compiled worker beside this file: the thread runs from dist/ (a unit spec under ts-jest has no
  // such file and must use a DATABASE_URL).
  const worker = new Worker(join(__dirname, 'embedded-postgres.worker.js'), {
    workerData: { dir },
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      // The database is closed (or its thread is gone): another process may open the folder now.
      lock.release();
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    worker.on('error', (error) => {
      reject(error);
      process.emitWarning(`embedded Postgres: its thread failed: ${error.message}`);
    });
    void exited.then(() => {
      reject(new Error('the embedded database stopped while starting'));
      // Once ready, an exit nobody asked for leaves the service without its database: say so at once
      // (readiness reports it too, as its check runs a query).
      if (!stopping) process.emitWarning('embedded Postgres: its thread exited unexpectedly');
    });
    worker.once('message', (message: WorkerReady) => {
      // Published in the lock: a command line writes through this port instead of opening PGlite again.
      lock.publish({ port: message.port });
      // The database answers the event loop's queries: it keeps their priority.
      if (message.threadId !== undefined) keepPriority(message.threadId);
      resolve({
        url: `postgres://postgres@127.0.0.1:${message.port}/postgres`,
        publishHttp: (http, prefix) => lock.publish({ http, prefix }),
        async stop() {
          stopping = true;
          started.delete(dir);
          worker.postMessage('stop');
          // It closes PGlite and exits; past a few seconds, it is ended.
          const timer = setTimeout(() => void worker.terminate(), 5000);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}
