import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type * as NestTesting from '@nestjs/testing';
import type supertest from 'supertest';
import type * as AppFile from '@/app';
import type * as AppModuleFile from '@/app.module';
import type * as JsonLoggerFile from '@/http/request/json-logger';
import type * as ConfigFile from '@/config/config';
import type * as SecretsFile from '@/config/secrets';
import { ADMIN_PASSWORD, type LogLine, REPO_ROOT, baseEnv } from '../support/server';
import { P } from '../support/api';
import { createTestDatabase, tempDir } from '../support/services';

/** Node's own require, put on the spec's global by `native-require.environment.js`. */
declare const nativeRequire: NodeJS.Require;

const DIST = join(REPO_ROOT, 'dist');
const FIRST_BUILD_TIMEOUT_MS = 60_000;

/**
 * A module of the compiled application (`dist/`, which `npm test` builds first), loaded by Node's own require.
 * Jest's loader cannot load what it imports (Nest 12, TypeORM 1 and BullMQ 6 ship only as ES modules), so
 * specs take classes and functions from here and only types from `@/...`:
 * `fromDist<typeof import('@/users/users.service')>('users/users.service').UsersService`.
 * Its objects come from Node's realm, not the spec's: compare them by value, never with `toBeInstanceOf`.
 */
export function fromDist<T>(path: string): T {
  const file = join(DIST, `${path}.js`);
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: build the service first (npx nest build)`);
  }
  return nativeRequire(file) as T;
}

export type Agent = ReturnType<typeof supertest>;

/** The application of one spec file, in this process, on its own database, Redis prefix and data folder. */
export interface InProcessApp {
  app: NestExpressApplication;
  /** supertest on the application's HTTP server: `http().get(path).set(...)`. */
  http(): Agent;
  /** The log lines the application wrote, parsed. */
  logs: LogLine[];
  /** A login token of `username` through the current layout's form (the admin's by default). */
  login(username?: string, password?: string): Promise<string>;
  /** Adds a user (password `<username>-password`) as the admin and returns a login token of theirs. */
  addUser(username: string, fields?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds the application as `main.ts` does (`AppModule.forRoot`, then `configureApp`), but through
 * `@nestjs/testing`, in the spec's process: on the real Postgres (a database of its own, dropped by `close`)
 * and the real Redis (a key prefix of its own), serving `examples/expenses` with a temporary DATA_DIR and
 * explicit secrets. Resolves once the first build has finished, so data endpoints answer at once. Environment
 * variables in `overrides` are read by `loadConfig` like the ones of a server process.
 */
export async function startApp(overrides: Record<string, string> = {}): Promise<InProcessApp> {
  // Nest's decorators need the metadata polyfill before any compiled class loads (main.ts imports it first).
  nativeRequire('reflect-metadata');
  const { Test } = nativeRequire('@nestjs/testing') as typeof NestTesting;
  const request = nativeRequire('supertest') as typeof supertest;
  const { configureApp } = fromDist<typeof AppFile>('app');
  const { AppModule } = fromDist<typeof AppModuleFile>('app.module');
  const { JsonLogger } = fromDist<typeof JsonLoggerFile>('http/request/json-logger');
  const { loadConfig } = fromDist<typeof ConfigFile>('config/config');
  const { resolveSecrets } = fromDist<typeof SecretsFile>('config/secrets');

  const database = await createTestDatabase();
  const dataDir = tempDir();
  const logs = new LogRecorder();
  let app: NestExpressApplication | undefined;
  const cleanUp = async () => {
    await app?.close();
    await database.drop();
    dataDir.remove();
  };
  try {
    const config = loadConfig(baseEnv(dataDir.path, database.url, overrides), REPO_ROOT);
    const logger = new JsonLogger(config.logLevel, logs.write);
    // The first build starts when the application boots; waiting on its log line, not on a timer.
    const firstBuild = logs.next(
      (line) => line.msg === 'build succeeded' || line.msg === 'build failed',
      FIRST_BUILD_TIMEOUT_MS,
    );
    firstBuild.catch(() => undefined);

    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot(config, logger, resolveSecrets(config))],
    })
      .setLogger(logger)
      .compile();
    // The options main.ts gives NestFactory.create (through createApp).
    app = moduleRef.createNestApplication<NestExpressApplication>({
      logger,
      bodyParser: false,
      abortOnError: false,
    });
    await configureApp(app, config, logger);
    // Listening once (on a random loopback port) lets supertest send requests side by side; on a server
    // that does not listen it would listen and close around each request.
    await app.listen(0, '127.0.0.1');
    const built = await firstBuild;
    if (built.msg === 'build failed')
      throw new Error(`the first build failed: ${String(built.error)}`);
  } catch (error) {
    await cleanUp();
    throw error;
  }

  const started = app;
  const http = () => request(started.getHttpServer());
  const login = async (username = 'admin', password = ADMIN_PASSWORD) => {
    const reply = await http().post(`${P}/login`).type('form').send({ username, password });
    if (reply.status !== 200) {
      throw new Error(`login of ${username} failed: ${reply.status} ${reply.text}`);
    }
    return (reply.body as { access_token: string }).access_token;
  };
  let adminToken: string | undefined;
  return {
    app: started,
    http,
    logs: logs.lines,
    login,
    async addUser(username, fields = {}) {
      const password = `${username}-password`;
      // Each login hashes a password (argon2, a good part of a second on a busy machine): one admin token.
      adminToken ??= await login();
      const reply = await http()
        .post(`${P}/users`)
        .auth(adminToken, { type: 'bearer' })
        .send({ username, password, ...fields });
      if (reply.status !== 200) {
        throw new Error(`adding ${username} failed: ${reply.status} ${reply.text}`);
      }
      return login(username, password);
    },
    close: cleanUp,
  };
}

/** The application's log lines, kept rather than printed: specs read them, and Jest's output stays readable. */
class LogRecorder {
  readonly lines: LogLine[] = [];
  private readonly waiters = new Set<(line: LogLine) => void>();

  readonly write = (text: string): void => {
    const line = JSON.parse(text) as LogLine;
    this.lines.push(line);
    for (const waiter of this.waiters) waiter(line);
  };

  /** The next line that matches, written from now on; rejects after the timeout. */
  next(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine> {
    return new Promise((resolve, reject) => {
      const waiter = (line: LogLine) => {
        if (!match(line)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(line);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no such log line within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.waiters.add(waiter);
    });
  }
}
