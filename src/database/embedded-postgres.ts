import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WorkerReady } from '@/database/embedded-postgres.worker';

/** A PGlite database under DATA_DIR, served on a loopback port so `pg` and TypeORM use it unchanged. */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Starts of the embedded database, by data folder: main.ts starts it early, Database.open takes it. */
const started = new Map<string, Promise<EmbeddedPostgres>>();

/**
 * Starts the embedded database in a worker thread (embedded-postgres.worker.ts) and resolves once it
 * accepts connections. A second call for the same folder returns the first one's start: main.ts calls this
 * before loading the application's modules, so that opening PGlite (a second or two of WebAssembly) runs
 * beside the loading of the modules instead of after it.
 */
export function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pglite');
  let start = started.get(dir);
  if (!start) {
    start = startWorker(dir);
    started.set(dir, start);
    start.catch(() => started.delete(dir));
  }
  return start;
}

function startWorker(dir: string): Promise<EmbeddedPostgres> {
  // The compiled worker beside this file: the thread runs from dist/ (a unit spec under ts-jest has no
  // such file and must use a DATABASE_URL).
  const worker = new Worker(join(__dirname, 'embedded-postgres.worker.js'), {
    workerData: { dir },
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
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
      resolve({
        url: `postgres://postgres@127.0.0.1:${message.port}/postgres`,
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
