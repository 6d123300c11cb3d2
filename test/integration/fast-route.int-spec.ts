import type * as NestCommon from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type * as NestTesting from '@nestjs/testing';
import type supertest from 'supertest';
import type * as FastRouteDecoratorFile from '@/http/fast-route/fast-route.decorator';
import type * as FastRouteModuleFile from '@/http/fast-route/fast-route.module';
import type * as FastRoutesFile from '@/http/fast-route/fast-routes';
import type * as JsonLoggerFile from '@/http/request/json-logger';
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
  const { JsonLogger } = fromDist<typeof JsonLoggerFile>('http/request/json-logger');
  const { Controller, Get, Post, Next, Param, Query, UseGuards, UseInterceptors, UsePipes } =
    common;

  const observed: { route: string; status: number }[] = [];

  /** Applies method decorators by hand: the spec is compiled by Jest, Nest's decorators come from Node's realm. */
  function decorate(target: object, method: string, ...decorators: MethodDecorator[]): void {
    const descriptor = Object.getOwnPropertyDescriptor(target, method)!;
    for (const decorator of decorators) decorator(target, method, descriptor);
  }

  /** An application with `controller`, fast routes attached as `configureApp` attaches them. */
  async function appWith(controller: new () => object): Promise<NestExpressApplication> {
    const logger = new JsonLogger('error', () => undefined);
    class LoggerModule {}
    common.Module({
      providers: [{ provide: JsonLogger, useValue: logger }],
      exports: [JsonLogger],
    })(LoggerModule);
    common.Global()(LoggerModule);
    const moduleRef = await Test.createTestingModule({
      imports: [LoggerModule, FastRouteModule],
      controllers: [controller],
    }).compile();
    const app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    await app.init();
    app
      .get(FastRoutes)
      .attach(app, (_method, route, status) => observed.push({ route, status }), false);
    return app;
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
      '@FastRoute() on Poster.post: only GET routes can be fast',
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
      '@FastRoute() on Nexter.next: the handler takes @Next(), and there is no next route to call',
    );
  });
});
