import type * as NestCommon from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type * as NestTesting from '@nestjs/testing';
import type supertest from 'supertest';
import type * as FastRouteDecoratorFile from '@/http/fast-route/fast-route.decorator';
import type * as FastRouteModuleFile from '@/http/fast-route/fast-route.module';
import type * as FastRoutesFile from '@/http/fast-route/fast-routes';
import type * as FastRouteSafeFile from '@/http/fast-route/fast-route-safe';
import type * as HttpErrorFilterFile from '@/http/errors/http-error.filter';
import type * as HttpReplyFile from '@/http/reply/http-reply';
import type * as NestCore from '@nestjs/core';
import type * as JsonLoggerFile from '@/runtime/json-logger';
import type * as SecurityHeadersFile from '@/http/security-headers';
import { fromDist } from './bootstrap';

/** Node's own require, put on the spec's global by `native-require.environment.js`. */
declare const nativeRequire: NodeJS.Require;

/**
 * `@FastRoute()` on small applications of its own: it runs the route's enhancers as Nest does (a guard, an
 * interceptor, a pipe, a parameter decorator, a filter), and it stops start-up, naming the route, on what
 * it cannot run.
 */
describe('@FastRoute()', () => {
  nativeRequire('reflect-metadata');
  const common = nativeRequire('@nestjs/common') as typeof NestCommon;
  const { Test } = nativeRequire('@nestjs/testing') as typeof NestTesting;
  const request = nativeRequire('supertest') as typeof supertest;
  const { FastRoute } = fromDist<typeof FastRouteDecoratorFile>(
    'http/fast-route/fast-route.decorator',
  );
  const { FastRouteModule } = fromDist<typeof FastRouteModuleFile>(
    'http/fast-route/fast-route.module',
  );
  const { FastRoutes } = fromDist<typeof FastRoutesFile>('http/fast-route/fast-routes');
  const { JsonLogger } = fromDist<typeof JsonLoggerFile>('runtime/json-logger');
  const { HttpErrorFilter } = fromDist<typeof HttpErrorFilterFile>('http/errors/http-error.filter');
  const { HttpReply } = fromDist<typeof HttpReplyFile>('http/reply/http-reply');
  const { fastRouteSafe } = fromDist<typeof FastRouteSafeFile>('http/fast-route/fast-route-safe');
  const { APP_FILTER, APP_INTERCEPTOR } = nativeRequire('@nestjs/core') as typeof NestCore;
  const {
    Controller,
    Get,
    Post,
    Next,
    Param,
    Query,
    Req,
    Res,
    Inject,
    Injectable,
    Scope,
    UseGuards,
    UseInterceptors,
    UsePipes,
  } = common;

  const observed: { route: string; status: number }[] = [];

  /** Applies method decorators by hand: the spec is compiled by Jest, Nest's decorators come from Node's realm. */
  function decorate(target: object, method: string, ...decorators: MethodDecorator[]): void {
    const descriptor = Object.getOwnPropertyDescriptor(target, method)!;
    for (const decorator of decorators) decorator(target, method, descriptor);
  }

  /** What a spec adds to the small application: providers, modules, and middleware before `init`. */
  interface Extras {
    providers?: NestCommon.Provider[];
    imports?: NestCommon.Type[];
    /** Called before `init`, as `configureApp` registers the app's middleware. */
    before?: (app: NestExpressApplication) => void;
    /** The app's catch-all exception filter (as AppModule has); true unless a spec leaves it out. */
    filter?: boolean;
  }

  /** An application with `controller`, fast routes attached as `configureApp` attaches them. */
  async function appWith(
    controller: new (...args: never[]) => object,
    extras: Extras = {},
  ): Promise<NestExpressApplication> {
    const logger = new JsonLogger('error', () => undefined);
    class LoggerModule {}
    common.Module({
      providers: [{ provide: JsonLogger, useValue: logger }],
      exports: [JsonLogger],
    })(LoggerModule);
    common.Global()(LoggerModule);
    const moduleRef = await Test.createTestingModule({
      imports: [LoggerModule, FastRouteModule, ...(extras.imports ?? [])],
      controllers: [controller],
      providers: [
        ...(extras.filter === false ? [] : [{ provide: APP_FILTER, useClass: HttpErrorFilter }]),
        ...(extras.providers ?? []),
      ],
    }).compile();
    // As main.ts creates it: the app registers its own body parsers (declared safe for the fast route).
    const app = moduleRef.createNestApplication<NestExpressApplication>({
      logger: false,
      bodyParser: false,
    });
    extras.before?.(app);
    try {
      await app.init();
      app
        .get(FastRoutes)
        .attach(app, (_method, route, status) => observed.push({ route, status }), {
          cors: false,
          hosts: undefined,
        });
    } catch (error) {
      await app.close();
      throw error;
    }
    return app;
  }

  /** A controller `name` with one fast GET route `it` answering `{ ok: true }`. */
  function fastController(name: string): new () => object {
    const Fast = {
      [name]: class {
        it() {
          return new HttpReply(200, { 'Content-Type': 'application/json' }, '{"ok":true}');
        }
      },
    }[name];
    decorate(Fast.prototype, 'it', Get('it'), FastRoute());
    Controller(name.toLowerCase())(Fast);
    return Fast;
  }

  it('runs the guard, interceptor, pipe and parameter decorators of the route it serves', async () => {
    const calls: string[] = [];
    const guard = {
      canActivate: (context: NestCommon.ExecutionContext) => {
        calls.push(`guard ${context.getHandler().name}`);
        return context.switchToHttp().getRequest<{ query: { deny?: string } }>().query.deny !== '1';
      },
    };
    const interceptor = {
      intercept: (context: NestCommon.ExecutionContext, next: NestCommon.CallHandler) => {
        context
          .switchToHttp()
          .getResponse<{ setHeader(n: string, v: string): void }>()
          .setHeader('X-Intercepted', 'yes');
        return next.handle();
      },
    };
    const upper = {
      transform: (value: unknown) => (typeof value === 'string' ? value.toUpperCase() : value),
    };
    class Greeter {
      greet(name: string, loud: string | undefined) {
        calls.push('handler');
        return { hello: name, loud: loud ?? null };
      }
    }
    decorate(
      Greeter.prototype,
      'greet',
      UseGuards(guard),
      UseInterceptors(interceptor),
      UsePipes(upper),
      Get('hello/:name'),
      FastRoute(),
    );
    Param('name')(Greeter.prototype, 'greet', 0);
    Query('loud')(Greeter.prototype, 'greet', 1);
    Controller('greeter')(Greeter);

    const app = await appWith(Greeter);
    try {
      const http = request(app.getHttpServer());
      const reply = await http.get('/greeter/hello/ada?loud=yes');
      expect(reply.status).toBe(200);
      expect(reply.headers['x-intercepted']).toBe('yes');
      expect(reply.headers['x-request-id']).toEqual(expect.any(String));
      expect(reply.body).toEqual({ hello: 'ADA', loud: 'YES' });
      expect(calls).toEqual(['guard greet', 'handler']);
      // Served by the fast route: observed under the route's template, as its metrics name it.
      expect(observed.at(-1)).toEqual({ route: '/greeter/hello/:name', status: 200 });

      const denied = await http.get('/greeter/hello/ada?deny=1');
      expect(denied.status).toBe(403);
      expect(calls.at(-1)).toBe('guard greet');
    } finally {
      await app.close();
    }
  });

  it('remembers how a path routes, leaves earlier routes theirs, and shares no parameters', async () => {
    class Pages {
      special() {
        return 'served by Express';
      }
      page(params: Record<string, string>) {
        const seen = params.name;
        params.name = 'changed by the handler';
        return { seen };
      }
    }
    decorate(Pages.prototype, 'special', Get('p/special'));
    decorate(Pages.prototype, 'page', Get('p/:name'), FastRoute());
    Param()(Pages.prototype, 'page', 0);
    Controller('pages')(Pages);

    const app = await appWith(Pages);
    try {
      const http = request(app.getHttpServer());
      for (let round = 0; round < 2; round++) {
        const before = observed.length;
        const special = await http.get('/pages/p/special');
        expect(special.text).toBe('served by Express');
        // Not the fast route: an earlier route takes the path, the first time and once remembered.
        expect(observed.length).toBe(before);
        const page = await http.get('/pages/p/ada');
        expect(page.body).toEqual({ seen: 'ada' });
        expect(observed.at(-1)).toEqual({ route: '/pages/p/:name', status: 200 });
      }
    } finally {
      await app.close();
    }
  });

  it("sets the security headers itself, which Express' responses get from the app's middleware", async () => {
    const { SECURITY_HEADERS } = fromDist<typeof SecurityHeadersFile>('http/security-headers');
    class Plain {
      fast(fail: string | undefined) {
        if (fail) throw new Error('failed');
        return { fast: true };
      }
      slow() {
        return { fast: false };
      }
    }
    decorate(Plain.prototype, 'fast', Get('fast'), FastRoute());
    decorate(Plain.prototype, 'slow', Get('slow'));
    Query('fail')(Plain.prototype, 'fast', 0);
    Controller('plain')(Plain);

    const app = await appWith(Plain);
    try {
      const http = request(app.getHttpServer());
      const expected = Object.fromEntries(
        SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value]),
      );
      expect(Object.keys(expected)).toContain('content-security-policy');
      for (const path of ['/plain/fast', '/plain/fast?fail=1']) {
        const before = observed.length;
        const reply = await http.get(path);
        expect(observed.length).toBe(before + 1);
        expect(reply.status).toBe(path.endsWith('fail=1') ? 500 : 200);
        expect(reply.headers).toMatchObject(expected);
      }
      // This application has none of configureApp's middleware: Express' response has none of them.
      const slow = await http.get('/plain/slow');
      expect(slow.body).toEqual({ fast: false });
      expect(slow.headers['content-security-policy']).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('stops start-up on a route that is not a GET', async () => {
    class Poster {
      post() {
        return 'posted';
      }
    }
    decorate(Poster.prototype, 'post', Post('it'), FastRoute());
    Controller('poster')(Poster);
    await expect(appWith(Poster)).rejects.toThrow(
      '@FastRoute() on POST /poster/it (Poster.post): only GET routes can be fast',
    );
  });

  it('stops start-up on a handler that takes @Next()', async () => {
    class Nexter {
      next(_next: unknown) {
        return 'next';
      }
    }
    decorate(Nexter.prototype, 'next', Get('it'), FastRoute());
    Next()(Nexter.prototype, 'next', 0);
    Controller('nexter')(Nexter);
    await expect(appWith(Nexter)).rejects.toThrow(
      '@FastRoute() on GET /nexter/it (Nexter.next): the handler takes @Next(): there is no next route to call',
    );
  });

  it('stops start-up on a handler that takes @Res() or @Req()', async () => {
    class Responder {
      it(_response: unknown) {
        return 'written';
      }
    }
    decorate(Responder.prototype, 'it', Get('it'), FastRoute());
    Res()(Responder.prototype, 'it', 0);
    Controller('responder')(Responder);
    await expect(appWith(Responder)).rejects.toThrow(
      "@FastRoute() on GET /responder/it (Responder.it): the handler takes @Res(): the handler would get Node's response, not Express'",
    );

    class Requester {
      it(_request: unknown) {
        return 'read';
      }
    }
    decorate(Requester.prototype, 'it', Get('it'), FastRoute());
    Req()(Requester.prototype, 'it', 0);
    Controller('requester')(Requester);
    await expect(appWith(Requester)).rejects.toThrow(
      "@FastRoute() on GET /requester/it (Requester.it): the handler takes @Req(): the handler would get Node's request, not Express'",
    );
  });

  it('stops start-up on a controller whose dependency tree is not static', async () => {
    class PerRequest {}
    Injectable({ scope: Scope.REQUEST })(PerRequest);
    class Scoped {
      constructor(readonly perRequest: PerRequest) {}
      it() {
        return 'scoped';
      }
    }
    Inject(PerRequest)(Scoped, undefined, 0);
    decorate(Scoped.prototype, 'it', Get('it'), FastRoute());
    Controller('scoped')(Scoped);
    await expect(appWith(Scoped, { providers: [PerRequest] })).rejects.toThrow(
      '@FastRoute() on GET /scoped/it (Scoped.it): its controller is request-scoped or depends on a request-scoped provider',
    );
  });

  it('stops start-up on an enhancer it cannot run: request-scoped, on the route or global', async () => {
    class ScopedGuard {
      canActivate() {
        return true;
      }
    }
    Injectable({ scope: Scope.REQUEST })(ScopedGuard);
    class Guarded {
      it() {
        return 'guarded';
      }
    }
    decorate(Guarded.prototype, 'it', UseGuards(ScopedGuard), Get('it'), FastRoute());
    Controller('guarded')(Guarded);
    await expect(appWith(Guarded)).rejects.toThrow(
      '@FastRoute() on GET /guarded/it (Guarded.it): its guard ScopedGuard is request-scoped or depends on a request-scoped provider',
    );

    class ScopedInterceptor {
      intercept(_context: unknown, next: NestCommon.CallHandler) {
        return next.handle();
      }
    }
    Injectable({ scope: Scope.REQUEST })(ScopedInterceptor);
    await expect(
      appWith(fastController('Intercepted'), {
        providers: [{ provide: APP_INTERCEPTOR, useClass: ScopedInterceptor }],
      }),
    ).rejects.toThrow(
      '@FastRoute() on GET /intercepted/it (Intercepted.it): the global interceptor ScopedInterceptor is request-scoped or depends on a request-scoped provider',
    );

    // Nest's fallback for an error no filter catches writes with Express' response methods.
    await expect(appWith(fastController('Unfiltered'), { filter: false })).rejects.toThrow(
      '@FastRoute() on GET /unfiltered/it (Unfiltered.it): no exception filter catches every error',
    );
  });

  it('stops start-up on middleware at / that it would skip, unless declared safe', async () => {
    const undeclared = (_request: unknown, _response: unknown, next: () => void) => next();
    await expect(
      appWith(fastController('Skipped'), { before: (app) => app.use(undeclared) }),
    ).rejects.toThrow(
      '@FastRoute() on GET /skipped/it (Skipped.it): the middleware "undeclared" (number 2 in Express\' stack) comes first and would be skipped; declare it with fastRouteSafe(middleware, reason)',
    );

    const calls: string[] = [];
    const declared = fastRouteSafe((_request: unknown, _response: unknown, next: () => void) => {
      calls.push('middleware');
      next();
    }, 'a spec: it does nothing the route needs');
    const app = await appWith(fastController('Declared'), { before: (a) => a.use(declared) });
    try {
      const before = observed.length;
      const reply = await request(app.getHttpServer()).get('/declared/it');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ ok: true });
      // Served by the fast route, which skipped the declared middleware.
      expect(observed.slice(before)).toEqual([{ route: '/declared/it', status: 200 }]);
      expect(calls).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it("stops start-up when Nest's Express adapter has a request hook, which runs in its own middleware", async () => {
    await expect(
      appWith(fastController('Hooked'), {
        before: (app) =>
          (
            app.getHttpAdapter() as unknown as {
              setOnRequestHook(hook: (q: unknown, r: unknown, done: () => void) => void): void;
            }
          ).setOnRequestHook((_request, _response, done) => done()),
      }),
    ).rejects.toThrow(
      "@FastRoute() on GET /hooked/it (Hooked.it): Nest's request or response hook (setOnRequestHook, setOnResponseHook) would not run",
    );
  });

  it("stops start-up on Nest middleware forRoutes('*') and on middleware mounted on its path", async () => {
    class Logged {
      configure(consumer: NestCommon.MiddlewareConsumer) {
        consumer
          .apply(function everywhere(_request: unknown, _response: unknown, next: () => void) {
            next();
          })
          .forRoutes('*');
      }
    }
    common.Module({})(Logged);
    await expect(appWith(fastController('Everywhere'), { imports: [Logged] })).rejects.toThrow(
      // Nest registers its middleware in a function of its own, named "handler".
      '@FastRoute() on GET /everywhere/it (Everywhere.it): the middleware "handler" (number 2 in Express\' stack) comes first and would be skipped',
    );

    const mounted = (_request: unknown, _response: unknown, next: () => void) => next();
    await expect(
      appWith(fastController('Mounted'), { before: (app) => app.use('/mounted', mounted) }),
    ).rejects.toThrow(
      '@FastRoute() on GET /mounted/it (Mounted.it): the middleware "mounted" (number 2 in Express\' stack) comes first and would be skipped',
    );
  });

  it('sends an HttpReply with the one writer on both paths, and an error before its first chunk as errors', async () => {
    const chunks = async function* (fail: boolean) {
      // As a query does, it starts on a later turn; then it fails, or yields its rows.
      await new Promise((resolve) => setImmediate(resolve));
      if (fail) throw new Error('the query failed');
      yield 'a,b\n';
      yield Buffer.from('1,2\n');
    };
    const csv = (fail: string | undefined) =>
      new HttpReply(200, { 'Content-Type': 'text/csv', ETag: '"1"' }, chunks(!!fail));
    class Streams {
      reply(fail: string | undefined) {
        return csv(fail);
      }
      slow(fail: string | undefined) {
        return csv(fail);
      }
    }
    decorate(Streams.prototype, 'reply', Get('fast'), FastRoute());
    decorate(Streams.prototype, 'slow', Get('slow'));
    Query('fail')(Streams.prototype, 'reply', 0);
    Query('fail')(Streams.prototype, 'slow', 0);
    Controller('streams')(Streams);

    const app = await appWith(Streams);
    try {
      const http = request(app.getHttpServer());
      for (const path of ['/streams/fast', '/streams/slow']) {
        const before = observed.length;
        const sent = await http.get(path).set('Accept-Encoding', 'identity');
        expect([path, sent.status, sent.headers['content-type'], sent.headers.etag]).toEqual([
          path,
          200,
          'text/csv',
          '"1"',
        ]);
        expect(sent.text).toBe('a,b\n1,2\n');
        expect(observed.length - before).toBe(path.endsWith('fast') ? 1 : 0);
        // Compressed by the same writer on both paths (supertest decodes gzip).
        const zipped = await http.get(path).set('Accept-Encoding', 'gzip');
        expect([zipped.headers['content-encoding'], zipped.headers.etag, zipped.text]).toEqual([
          'gzip',
          '"1-gzip"',
          'a,b\n1,2\n',
        ]);

        const failed = await http.get(`${path}?fail=1`);
        expect([path, failed.status]).toEqual([path, 500]);
        expect(failed.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(failed.body).toMatchObject({ error: 'internal_error' });
      }
    } finally {
      await app.close();
    }
  });
});
