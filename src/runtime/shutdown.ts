import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { JsonLogger } from '@/runtime/json-logger';

const HARD_DEADLINE_MS = 6000;

/**
 * SIGTERM and SIGINT: stop accepting connections, interrupt what would outlast the timeout (`interrupt`:
 * the build running here, whose waiting `POST P/build` is answered), let in-flight requests finish, and
 * only then close the engine, caches, queue and database (Nest's destroy and shutdown hooks). Nest's own
 * close() runs the modules' destroy hooks before it closes the HTTP server, so a request arriving on a
 * kept-alive connection meanwhile would find them closed and get a 503: the server is closed here first.
 * Past the timeout, remaining connections are cut so that the process still exits.
 */
export function installShutdown(
  app: INestApplication,
  logger: JsonLogger,
  timeoutMs: number,
  interrupt: (signal: NodeJS.Signals) => Promise<void> = () => Promise.resolve(),
): void {
  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.emit('info', 'shutting down', { signal });
    const server = app.getHttpServer() as Server;
    // A keep-alive connection whose request finishes after close() would otherwise stay open until the
    // client's idle timeout: close idle connections as they appear.
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    sweeper.unref();
    const timer = setTimeout(() => {
      logger.emit('warn', 'shutdown timeout: closing remaining connections', { timeoutMs });
      server.closeAllConnections();
    }, timeoutMs);
    timer.unref();
    // A neighbour that never answers must not keep the process alive: a last deadline exits anyway. Not
    // with process.exit(): while a DuckDB statement runs, exit waits for the thread running it (a build's
    // CREATE TABLE over a large cross join ran on past a minute, where SIGKILL is immediate).
    const deadline = setTimeout(() => {
      logger.emit('error', 'shutdown did not finish: exiting', {
        timeoutMs: timeoutMs + HARD_DEADLINE_MS,
      });
      process.kill(process.pid, 'SIGKILL');
    }, timeoutMs + HARD_DEADLINE_MS);
    deadline.unref();
    // The build is interrupted while the server closes: its waiting request is answered, not cut.
    const interrupted = interrupt(signal).catch((error: unknown) =>
      logger.emit('error', 'interrupting the build failed', {
        error: error instanceof Error ? error.message : String(error),
      }),
    );
    Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), interrupted])
      .then(() => app.close())
      .then(() => {
        clearTimeout(timer);
        clearTimeout(deadline);
        clearInterval(sweeper);
        logger.emit('info', 'stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.emit('error', 'shutdown failed', {
          error: error instanceof Error ? error.message : String(error),
        });
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
