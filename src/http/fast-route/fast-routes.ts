import { Injectable } from '@nestjs/common';
import {
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import {
  ApplicationConfig,
  DiscoveryService,
  MetadataScanner,
  ModulesContainer,
} from '@nestjs/core';
import type { ExceptionsHandler } from '@nestjs/core/exceptions/exceptions-handler';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { ExternalContextCreator } from '@nestjs/core/helpers/external-context-creator';
import type { NestContainer } from '@nestjs/core/injector/container';
import { RouteParamsFactory } from '@nestjs/core/router/route-params-factory';
import type { RouterProxyCallback } from '@nestjs/core/router/router-proxy';
import { RouterExceptionFilters } from '@nestjs/core/router/router-exception-filters';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAST_ROUTE } from '@/http/fast-route/fast-route.decorator';
import {
  RouterLayer,
  Surroundings,
  enhancerProblem,
  handlerProblem,
  preceding,
} from '@/http/fast-route/fast-route-checks';
import { replyOf, sendReply } from '@/http/reply/http-reply';
import { JsonLogger } from '@/runtime/json-logger';
import { checkUrl } from '@/http/input/input-limits';
import { HostRule, hostRefusal } from '@/http/request/host-rule';
import { RequestObserver, requestFinished, serveRequest } from '@/http/request/request-logging';
import { setSecurityHeaders } from '@/http/security-headers';

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
  /** The route's template, as metrics and log lines name it (`/api/.../:dataset/results`). */
  template: string;
  layer: RouterLayer;
  /** Routes and middleware mounted on a path, registered earlier: a request they match goes to Express. */
  earlier: RouterLayer[];
  handler: Handler;
  /** The route's exception filters, as Nest's router runs them. */
  errors: ExceptionsHandler;
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
 * objects, Nest's response controller and `res.send`; see docs/performance.md, "Figures behind the code",
 * "Fast routes"), so the most frequent request skips them, and nothing else does. It is a port with a
 * contract, checked at start-up:
 *
 * - The handler is the controller method, run through Nest's own context machinery (`ExternalContextCreator`,
 *   the one Nest's microservices and GraphQL use): the global and route guards, interceptors, pipes and
 *   parameter decorators (built-in ones as Nest's router reads them), with an `http` execution context whose
 *   request and response are Node's own; errors go to the route's exception filters as Nest's router hands
 *   them over (`RouterExceptionFilters`).
 * - The handler returns an `HttpReply` (or a value Nest would send as it is), which the one writer,
 *   `sendReply`, sends here and on Nest's path alike; it takes no `@Req()` or `@Res()`.
 * - What the app's middleware does for every request is done here: the security headers, computed once
 *   (`http/security-headers.ts`), the request id and context, the log line and the metrics under the
 *   route's template (`http/request/request-logging.ts`); Express' simple query parser
 *   (`node:querystring`) and its route parameters (the route's own layer matches the path).
 *
 * Start-up fails, naming the route (method, path, handler) and the reason, on what cannot run here
 * (`fast-route-checks.ts`): a route that is not a GET or that Express does not have, a parameter or
 * decorator that needs Express (`@Req`, `@Res`, `@Next`, `@Ip`, `@Redirect`, `@Render`, `@Sse`, host or
 * version routing...), a controller or enhancer whose dependency tree is not static, no exception filter
 * that catches everything, and middleware before the route that applies to it and is not declared
 * `fastRouteSafe`. Requests go on to Express untouched when they are not a GET of a fast route, when middleware
 * mounted on a path or a route registered earlier matches them, when their path does not decode, when they
 * carry a body, cross-origin requests when CORS is on (Express adds its headers), and requests whose `Host`
 * the service's rule refuses (Express' middleware answers them, http/request/host-rule.ts).
 */
@Injectable()
export class FastRoutes {
  private readonly matches = new Map<string, PathMatch | null>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly nest: ApplicationConfig,
    private readonly contexts: ExternalContextCreator,
    private readonly modules: ModulesContainer,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * Puts the fast routes in front of the server's one request listener (Express). Call once the application
   * is initialised (its routes and middleware registered) and before it listens; throws on a route it
   * cannot serve.
   */
  attach(
    app: NestExpressApplication,
    observe: RequestObserver,
    { cors, hosts }: { cors: boolean; hosts: HostRule | undefined },
  ): void {
    const adapter = app.getHttpAdapter() as unknown as {
      getInstance(): ExpressApp;
      onRequestHook?: unknown;
      onResponseHook?: unknown;
    };
    const express = adapter.getInstance();
    const around: Surroundings = {
      adapterHooks: adapter.onRequestHook !== undefined || adapter.onResponseHook !== undefined,
      cors,
    };
    // Nest's router builds its exception handlers so; they read only the container's modules.
    const filters = new RouterExceptionFilters(
      { getModules: () => this.modules } as unknown as NestContainer,
      this.nest,
      app.getHttpAdapter(),
    );
    const served = this.marked(express, around, filters);
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
      const found = this.find(served, request, cors, hosts);
      if (!found) return handle(request, response);
      void this.answer(found.route, found.params, request, response, observe);
    });
  }

  /** The routes marked `@FastRoute()`, checked, each with the handler Nest's context machinery makes. */
  private marked(
    express: ExpressApp,
    around: Surroundings,
    filters: RouterExceptionFilters,
  ): Served[] {
    const served: Served[] = [];
    const params = new RouteParamsFactory();
    const paramsFactory = {
      // Nest's router reads built-in parameters (`@Param`, `@Query`, `@Headers`) from an object; the
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
    const stack = express.router.stack;
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const callback = prototype[method] as (...args: unknown[]) => unknown;
        if (!Reflect.getMetadata(FAST_ROUTE, callback)) continue;
        const name = `${controller.name}.${method}`;
        // Express' layers of the route: Nest names each route's handler after its controller and method.
        const layers = stack.flatMap((layer, index) =>
          layer.route?.methods.get && layer.route.stack.some((entry) => entry.name === name)
            ? [{ layer, index, template: layer.route.path }]
            : [],
        );
        const route = layers.length
          ? `GET ${layers.map(({ template }) => template).join(', ')}`
          : `${RequestMethod[Reflect.getMetadata(METHOD_METADATA, callback) as number] ?? 'GET'} ${declaredPath(controller, callback)}`;
        const refuse = (why: string) => new Error(`@FastRoute() on ${route} (${name}): ${why}`);
        const problem =
          handlerProblem(controller, method, callback, this.nest.getVersioning() !== undefined) ??
          enhancerProblem(wrapper, method, callback, this.nest);
        if (problem) throw refuse(problem);
        if (layers.length === 0) throw refuse('not a route of Express');
        const instance = wrapper.instance as object;
        const handler = this.contexts.create(
          instance,
          callback,
          method,
          ROUTE_ARGS_METADATA,
          paramsFactory,
          undefined,
          undefined,
          // The filters run as Nest's router runs them (`errors`), whatever they return.
          { guards: true, interceptors: true, filters: false },
          'http',
        ) as Handler;
        const errors = filters.create(
          instance,
          callback as RouterProxyCallback,
          wrapper.host?.token,
        );
        const status =
          (Reflect.getMetadata(HTTP_CODE_METADATA, callback) as number | undefined) ?? 200;
        const headers = (Reflect.getMetadata(HEADERS_METADATA, callback) ??
          []) as Served['headers'];
        for (const { layer, index, template } of layers) {
          const { earlier, problem: before } = preceding(stack, index, template, around);
          if (before) throw new Error(`@FastRoute() on GET ${template} (${name}): ${before}`);
          served.push({ template, layer, earlier, handler, errors, status, headers });
        }
      }
    }
    return served;
  }

  /** The fast route a request is for, with its parameters; undefined leaves it to Express. */
  private find(
    routes: Served[],
    request: IncomingMessage,
    cors: boolean,
    hosts: HostRule | undefined,
  ): { route: Served; params: Record<string, string> } | undefined {
    const url = request.url;
    if (request.method !== 'GET' || !url?.startsWith('/')) return undefined;
    if (cors && request.headers.origin !== undefined) return undefined;
    // Express' middleware refuses it (http/request/host-rule.ts), with its log line.
    if (hostRefusal(hosts, request.headers.host) !== undefined) return undefined;
    if (request.headers['content-length'] || request.headers['transfer-encoding']) return undefined;
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    let match = this.matches.get(path);
    if (match === undefined) {
      match = matchPath(routes, path);
      // Express' layers run a regex each, the earlier ones included (see docs/performance.md, "Figures
      // behind the code", "Fast routes"). A path matches the same way every time, so its outcome is kept; a
      // full table starts again (paths are few in practice; a client inventing paths costs a rematch, not
      // memory).
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
        const result: unknown = await route.handler(request, response, noNext);
        // A body in hand is sent with no promise; only a stream's is awaited.
        const streaming = sendReply(replyOf(result, response.statusCode), response);
        if (streaming) await streaming;
      } catch (error) {
        this.answerError(route, error, request, response);
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

  /**
   * Hands an error to the route's exception filters, as Nest's router does (`RouterProxy`). Start-up made
   * sure one of them catches everything; should it throw in turn, the connection is cut rather than left
   * hanging.
   */
  private answerError(
    route: Served,
    error: unknown,
    request: Request,
    response: ServerResponse,
  ): void {
    try {
      // Nest's router hands its filters whatever was thrown, typed or not.
      route.errors.next(error as Error, new ExecutionContextHost([request, response, noNext]));
    } catch {
      response.destroy();
    }
  }
}

/** The route's path as its decorators declare it, for a route Express does not have. */
function declaredPath(controller: object, callback: object): string {
  const first = (path: unknown) => (Array.isArray(path) ? (path[0] as unknown) : path);
  const parts = [
    first(Reflect.getMetadata(PATH_METADATA, controller)),
    first(Reflect.getMetadata(PATH_METADATA, callback)),
  ];
  return `/${parts
    .filter((part): part is string => typeof part === 'string')
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
}
