import { Injectable, RequestMethod, StreamableFile } from '@nestjs/common';
import {
  HEADERS_METADATA,
  HOST_METADATA,
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApplicationConfig, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { ExternalContextCreator } from '@nestjs/core/helpers/external-context-creator';
import { RouteParamsFactory } from '@nestjs/core/router/route-params-factory';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAST_ROUTE } from '@/http/fast-route/fast-route.decorator';
import { sendError } from '@/http/errors/http-error.filter';
import { JsonLogger } from '@/http/request/json-logger';
import { checkUrl } from '@/http/input/input-limits';
import { RequestObserver, requestFinished, serveRequest } from '@/http/request/request-context';
import { setSecurityHeaders } from '@/http/security-headers';

/** What this module reads of Express 5's router (the `router` package) to match paths as Express does. */
interface RouterLayer {
  /** Mounted on `/`: matches every path. */
  slash: boolean;
  route?: { path: string; methods: Record<string, boolean | undefined>; stack: { name: string }[] };
  match(path: string): { params: Record<string, string> } | false;
}

interface ExpressApp {
  router: { stack: RouterLayer[] };
}

/** Express' request as handlers read it: what the shortcut sets on Node's own request. */
type Request = IncomingMessage & {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  originalUrl?: string;
};

type Handler = (request: Request, response: ServerResponse, next: () => void) => Promise<unknown>;

/** A route served here: its layer in Express' router (to match paths) and the handler Nest made for it. */
interface Served {
  name: string;
  /** The route's template, as metrics and log lines name it (`/api/.../:dataset/results`). */
  template: string;
  layer: RouterLayer;
  /** Routes and middleware mounted on a path, registered earlier: a request they match goes to Express. */
  earlier: RouterLayer[];
  handler: Handler;
  status: number;
  headers: { name: string; value: string }[];
}

/** Paths whose match (or non-match) is remembered by {@link FastRoutes.find}. */
const MATCHES_MAX = 1000;

interface PathMatch {
  route: Served;
  params: Record<string, string>;
}

/**
 * The fast route a path is for, as Express would route it: null when none matches, when a route or
 * middleware registered earlier would take it first, or when it does not decode (Express answers 400).
 */
function matchPath(routes: Served[], path: string): PathMatch | null {
  for (const route of routes) {
    try {
      const match = route.layer.match(path);
      if (!match) continue;
      if (route.earlier.some((other) => other.match(path))) return null;
      return { route, params: match.params };
    } catch {
      return null;
    }
  }
  return null;
}

/** Express' `next` of a route handler; a fast route has no next route (start-up refuses `@Next()`). */
const noNext = (): void => undefined;

/**
 * Serves the GET routes marked `@FastRoute()` in front of Express' router and middleware. Profiling showed
 * them to be most of a cached dataset read's CPU time (Express' route walk, its request and response
 * objects, Nest's response controller and `res.send`: about 400 µs a request against 200 µs here), so the
 * most frequent request skips them, and nothing else does:
 *
 * - The handler is the controller method, run through Nest's own context machinery (`ExternalContextCreator`,
 *   the one Nest's microservices and GraphQL use): the global and route guards, interceptors, pipes,
 *   parameter decorators (built-in ones as Nest's router reads them) and exception filters, with an `http`
 *   execution context whose request and response are Node's own.
 * - What the app's middleware does for every request is done here: the security headers, computed once
 *   (`http/security-headers.ts`), the request id and context, the log line and the metrics under the
 *   route's template (`http/request/request-context.ts`); Express' simple query parser
 *   (`node:querystring`) and its route parameters (the route's own layer matches the path).
 * - What the handler returns is written as Nest's Express adapter would: a string or an object, or a web
 *   `Response` (a 304, a stream) with back-pressure. An error before the first byte is answered by the one
 *   error mapping; one after it cuts the connection, as a truncated body must not look complete.
 *
 * Requests go on to Express untouched when they are not a GET of a fast route, when a route or middleware
 * mounted on a path and registered earlier would take them, when their path does not decode, when they carry
 * a body, and cross-origin requests when CORS is on (Express adds its headers). Start-up fails, naming the
 * route, on what cannot run here: a route that is not a GET or that Express does not have, `@Next()`,
 * `@Redirect()`, `@Render()`, `@Sse()`, host or version routing.
 */
@Injectable()
export class FastRoutes {
  private readonly matches = new Map<string, PathMatch | null>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly nest: ApplicationConfig,
    private readonly contexts: ExternalContextCreator,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * Puts the fast routes in front of the server's one request listener (Express). Call once the application
   * is initialised (its routes registered) and before it listens.
   */
  attach(app: NestExpressApplication, observe: RequestObserver, cors: boolean): void {
    const express = app.getHttpAdapter().getInstance() as unknown as ExpressApp;
    const served = this.marked().flatMap((route) => this.plan(express, route));
    if (served.length === 0) return;
    const server = app.getHttpServer();
    const listeners = server.listeners('request');
    if (listeners.length !== 1) {
      throw new Error(
        `Fast routes: the HTTP server has ${listeners.length} request listeners, not 1`,
      );
    }
    const handle = listeners[0] as (request: IncomingMessage, response: ServerResponse) => void;
    server.removeListener('request', handle);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const found = this.find(served, request, cors);
      if (!found) return handle(request, response);
      void this.answer(found.route, found.params, request, response, observe);
    });
  }

  /** The handlers marked `@FastRoute()`, checked, each with the handler Nest's context machinery makes. */
  private marked(): Omit<Served, 'layer' | 'earlier' | 'template'>[] {
    const routes: Omit<Served, 'layer' | 'earlier' | 'template'>[] = [];
    const params = new RouteParamsFactory();
    const paramsFactory = {
      // Nest's router reads built-in parameters (`@Param`, `@Query`, `@Headers`, ...) from an object; the
      // context machinery hands over the handler's arguments.
      exchangeKeyForValue: (type: number, data: unknown, args: unknown[]) => {
        const [req, res, next] = args as [Request, ServerResponse, () => void];
        return params.exchangeKeyForValue<Request, ServerResponse, unknown>(type, data as string, {
          req,
          res,
          next,
        });
      },
    };
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!instance || !controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const callback = prototype[method] as (...args: unknown[]) => unknown;
        if (!Reflect.getMetadata(FAST_ROUTE, callback)) continue;
        const name = `${controller.name}.${method}`;
        const refuse = (why: string) => new Error(`@FastRoute() on ${name}: ${why}`);
        if (Reflect.getMetadata(METHOD_METADATA, callback) !== RequestMethod.GET) {
          throw refuse('only GET routes can be fast');
        }
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as object;
        if (Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.NEXT}:`))) {
          throw refuse('the handler takes @Next(), and there is no next route to call');
        }
        for (const [key, what] of [
          [REDIRECT_METADATA, '@Redirect()'],
          [RENDER_METADATA, '@Render()'],
          [SSE_METADATA, '@Sse()'],
        ]) {
          if (Reflect.getMetadata(key, callback) !== undefined)
            throw refuse(`${what} is not run here`);
        }
        if (Reflect.getMetadata(HOST_METADATA, controller) !== undefined) {
          throw refuse('host routing is a filter of the Express router, which is skipped');
        }
        const versioned =
          Reflect.getMetadata(VERSION_METADATA, controller) !== undefined ||
          Reflect.getMetadata(VERSION_METADATA, callback) !== undefined;
        if (versioned && this.nest.getVersioning()) {
          throw refuse('versioning is a filter of the Express router, which is skipped');
        }
        const handler = this.contexts.create(
          instance,
          callback,
          method,
          ROUTE_ARGS_METADATA,
          paramsFactory,
          undefined,
          undefined,
          { guards: true, interceptors: true, filters: true },
          'http',
        ) as Handler;
        routes.push({
          name,
          handler,
          status: (Reflect.getMetadata(HTTP_CODE_METADATA, callback) as number | undefined) ?? 200,
          headers: (Reflect.getMetadata(HEADERS_METADATA, callback) ?? []) as Served['headers'],
        });
      }
    }
    return routes;
  }

  /** Where Express has the route, and what it would try first; throws when Express does not have it. */
  private plan(
    express: ExpressApp,
    route: Omit<Served, 'layer' | 'earlier' | 'template'>,
  ): Served[] {
    const stack = express.router.stack;
    const served: Served[] = [];
    stack.forEach((layer, index) => {
      const path = layer.route?.path;
      if (!path || !layer.route?.methods.get) return;
      if (!layer.route.stack.some((handler) => handler.name === route.name)) return;
      const earlier = stack
        .slice(0, index)
        .filter((other) => (other.route ? other.route.methods.get : !other.slash));
      const shadow = earlier.find((other) => other.route?.path === path);
      if (shadow) {
        throw new Error(`@FastRoute() on ${route.name} (GET ${path}): another route comes first`);
      }
      served.push({ ...route, template: path, layer, earlier });
    });
    if (served.length === 0)
      throw new Error(`@FastRoute() on ${route.name}: not a route of Express`);
    return served;
  }

  /** The fast route a request is for, with its parameters; undefined leaves it to Express. */
  private find(
    routes: Served[],
    request: IncomingMessage,
    cors: boolean,
  ): { route: Served; params: Record<string, string> } | undefined {
    const url = request.url;
    if (request.method !== 'GET' || !url?.startsWith('/')) return undefined;
    if (cors && request.headers.origin !== undefined) return undefined;
    if (request.headers['content-length'] || request.headers['transfer-encoding']) return undefined;
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    let match = this.matches.get(path);
    if (match === undefined) {
      match = matchPath(routes, path);
      // Express' layers run a regex each, the earlier ones included (about 10 µs of CPU a request here). A path
      // matches the same way every time, so its outcome is kept; a full table starts again (paths are few
      // in practice; a client inventing paths costs a rematch, not memory).
      if (this.matches.size >= MATCHES_MAX) this.matches.clear();
      this.matches.set(path, match);
    }
    if (match === null) return undefined;
    return {
      route: match.route,
      // A copy: the handler's request owns its parameters.
      params: { ...match.params },
    };
  }

  /** Runs the route's handler in the request's context and writes what it returns. */
  private async answer(
    route: Served,
    params: Record<string, string>,
    request: Request,
    response: ServerResponse,
    observe: RequestObserver,
  ): Promise<void> {
    const started = process.hrtime.bigint();
    request.params = params;
    request.originalUrl = request.url;
    await serveRequest(request, response, async (id) => {
      try {
        // What the app's first middleware sets on Express' responses (app.ts).
        setSecurityHeaders(response);
        // As app.ts reads it for Express (requestLimits, then the query parser), with the same bounds.
        request.query = checkUrl(request.url ?? '');
        response.statusCode = route.status;
        for (const { name, value } of route.headers) response.setHeader(name, value);
        // Errors of the guards, pipes and handler are answered by the exception filters.
        const result: unknown = await route.handler(request, response, noNext);
        // Unless an exception filter (or the handler itself) has answered.
        if (!response.headersSent) {
          if (result instanceof globalThis.Response) await writeWebResponse(result, response);
          else write(result, response);
        }
      } catch (error) {
        // A filter that did not handle the error, or a stream that failed before its first byte; once the
        // headers are out, the filter has answered or the stream has cut the connection.
        if (!response.headersSent) sendError(this.logger, error, request, response);
      }
      requestFinished(
        this.logger,
        observe,
        request,
        id,
        route.template,
        response.statusCode,
        started,
      );
    });
  }
}

/** Writes a handler's result (not a web `Response`) as Nest's Express adapter sends it. */
function write(result: unknown, response: ServerResponse): void {
  if (result instanceof StreamableFile) {
    throw new Error('A fast route cannot send a StreamableFile: return a web Response');
  }
  let body: string;
  if (result === undefined || result === null) body = '';
  else if (typeof result === 'string') body = result;
  else {
    body = JSON.stringify(result);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
  }
  if (!response.hasHeader('Content-Type')) {
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
  }
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(body);
}

/**
 * A web `Response`: its status and headers win; its body is streamed with back-pressure. The headers go out
 * with the first chunk, so an error before it still rejects with nothing sent (the caller answers it).
 */
async function writeWebResponse(
  result: globalThis.Response,
  response: ServerResponse,
): Promise<void> {
  const send = () => {
    response.statusCode = result.status;
    result.headers.forEach((value, name) => response.setHeader(name, value));
  };
  if (!result.body) {
    send();
    response.end();
    return;
  }
  const reader = result.body.getReader();
  try {
    let step = await reader.read();
    send();
    try {
      for (; !step.done; step = await reader.read()) {
        if (response.destroyed) return;
        if (!response.write(step.value)) await writable(response);
      }
      response.end();
    } catch {
      response.destroy();
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Resolves once the response drains, or closes (the client went away). */
function writable(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
