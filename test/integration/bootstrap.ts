import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type * as NestTesting from '@nestjs/testing';
import type supertest from 'supertest';
import type * as AppFile from '@/app';
import type * as AppModuleFile from '@/app.module';
import type * as JsonLoggerFile from '@/runtime/json-logger';
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
  const { JsonLogger } = fromDist<typeof JsonLoggerFile>('runtime/json-logger');
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

/** What `useApp` sets up before a spec file's first test. */
export interface SharedAppOptions {
  /** Environment variables read by `loadConfig`, as for `startApp`. */
  env?: Record<string, string>;
  /** Users added by the admin before the first test (fields such as `role`), each logged in once. */
  users?: Record<string, Record<string, unknown>>;
}

/** The application of a spec file, set up by `useApp`: what `startApp` gives, and tokens made once. */
export interface SharedApp extends InProcessApp {
  /** The token of `admin` or of a user named in `users`, logged in once before the first test. */
  token(username: string): string;
  /**
   * A spy on `method` of the application's own instance of `className`, a class that the compiled file
   * `path` exports (`'datasets/datasets.service'`, `'DatasetsService'`, `'reply'`): the call a request ends
   * in, which both layouts of a feature must reach. Restored after each test.
   */
  spyOn(path: string, className: string, method: string): jest.SpyInstance;
}

/**
 * The one set-up of an in-process spec file: called in its `describe`, it starts the application before
 * the first test (`startApp`, so a database, a Redis prefix and a data folder of the file's own), adds the
 * users and logs everyone in once (a login hashes a password: each one costs a good part of a second),
 * restores every spy after each test and closes the application after the last. One application per file
 * keeps the tier fast: a start, with its first build, takes several seconds.
 */
export function useApp(options: SharedAppOptions = {}): SharedApp {
  let started: InProcessApp | undefined;
  const tokens = new Map<string, string>();
  const current = (): InProcessApp => {
    if (!started) throw new Error('the application is not started: use it inside a test or a hook');
    return started;
  };

  beforeAll(async () => {
    started = await startApp(options.env);
    tokens.set('admin', await started.login());
    for (const [username, fields] of Object.entries(options.users ?? {})) {
      tokens.set(username, await started.addUser(username, fields));
    }
  });
  afterAll(async () => {
    await started?.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  return {
    get app() {
      return current().app;
    },
    get logs() {
      return current().logs;
    },
    http: () => current().http(),
    login: (username, password) => current().login(username, password),
    addUser: (username, fields) => current().addUser(username, fields),
    close: () => current().close(),
    token(username) {
      const token = tokens.get(username);
      if (token === undefined)
        throw new Error(`no token of ${username}: name them in useApp's users`);
      return token;
    },
    spyOn(path, className, method) {
      const type =
        fromDist<Record<string, abstract new (...args: never[]) => unknown>>(path)[className];
      if (type === undefined) throw new Error(`dist/${path}.js exports no ${className}`);
      const instance = current().app.get<Record<string, (...args: unknown[]) => unknown>>(type);
      if (typeof instance[method] !== 'function') {
        throw new Error(`${className} has no method ${method}`);
      }
      return jest.spyOn(instance, method);
    },
  };
}

/** The body of an error in the current layout: `{statusCode, error, message}`. */
export function currentError(status: number, error: string, message: unknown = expect.any(String)) {
  return { statusCode: status, error, message };
}

/**
 * The body of an error in the legacy layout: `{detail}`, and for a 400 `{detail, message}` with the same
 * text (the 0.4 service's validation errors carried both).
 */
export function legacyError(status: number, detail: unknown = expect.any(String)) {
  return status === 400 ? { detail, message: detail } : { detail };
}
