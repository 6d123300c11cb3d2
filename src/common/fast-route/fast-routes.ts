import { Injectable, RequestMethod } from '@nestjs/common';
import {
  HOST_METADATA,
  METHOD_METADATA,
  ROUTE_ARGS_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApplicationConfig, DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAST_ROUTE } from '@/common/fast-route/fast-route.decorator';

type Next = (error?: unknown) => void;

const BODY_ONLY = new WeakSet<object>();

/**
 * Marks an app-wide middleware that does nothing to a request without a body (a body parser): fast routes
 * take only requests without one, so they skip it. Measured: the two body parsers were about 15% of the CPU
 * time of a cached request of results.
 */
export function onlyWithBody<T extends object>(middleware: T): T {
  BODY_ONLY.add(middleware);
  return middleware;
}

/** What this module reads of Express 5's router (the `router` package): its layers and routes. */
interface RouterLayer {
  name: string;
  handle: object;
  /** Mounted on `/`: matches every path and leaves the URL as it is. */
  slash: boolean;
  route?: { path: string; methods: Record<string, boolean | undefined>; stack: { name: string }[] };
  match(path: string): { params: Record<string, string> } | false;
  handleRequest(request: Request, response: Response, next: Next): void;
  handleError(error: unknown, request: Request, response: Response, next: Next): void;
}

interface ExpressInternals {
  router: { stack: RouterLayer[] };
  request: object;
  response: object;
  enabled(setting: string): boolean;
}

/** A route served here: its layer in Express' router, what runs before it, what Express would try first. */
interface Served {
  layer: RouterLayer;
  /** The middleware mounted on `/` before the route, which runs for every request (but body parsers). */
  middleware: RouterLayer[];
  /** GET routes and middleware mounted on a path, before the route: a request they match goes to Express. */
  earlier: RouterLayer[];
}

/**
 * Serves the GET routes marked {@link FastRoute} without Express' router walk. In front of Express on the
 * HTTP server, a GET whose path matches one of them is set up as Express sets up every request (prototypes,
 * `originalUrl`, `params`, `route`), goes through the app-wide middleware in order (request id and log line,
 * CORS, error handlers; not the body parsers marked {@link onlyWithBody}, as it takes only requests without a
 * body), then to the route's own layer, which calls the handler Nest built for it. Every other request goes to Express untouched, and so does a GET that a route or a middleware
 * mounted on a path, registered earlier, would take, or whose path does not decode.
 *
 * Start-up fails, naming the route, when Express could not be skipped without changing what runs: a
 * marked route that is not a GET or that Nest did not register with Express, a handler that takes `@Next()`
 * (there is no next route to go to), host or version routing (a filter Express would apply), or another
 * GET handler registered earlier for the same path (the route would never be reached).
 */
@Injectable()
export class FastRoutes {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly nest: ApplicationConfig,
  ) {}

  /** Call once the application is initialised (its routes registered) and before it listens. */
  attach(app: NestExpressApplication): void {
    const express = app.getHttpAdapter().getInstance() as unknown as ExpressInternals;
    const served = this.marked().flatMap((name) => this.plan(express, name));
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
      if (!this.serve(express, served, request, response)) handle(request, response);
    });
  }

  /** The handlers marked `@FastRoute()`, as Nest names their route handlers (`Class.method`). */
  private marked(): string[] {
    const names: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method] as object;
        if (!Reflect.getMetadata(FAST_ROUTE, handler)) continue;
        const name = `${controller.name}.${method}`;
        const refuse = (why: string) => new Error(`@FastRoute() on ${name}: ${why}`);
        if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.GET) {
          throw refuse('only GET routes can be fast');
        }
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as object;
        if (Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.NEXT}:`))) {
          throw refuse('the handler takes @Next(), and there is no next route to call');
        }
        if (Reflect.getMetadata(HOST_METADATA, controller) !== undefined) {
          throw refuse('host routing is a filter of the Express router, which is skipped');
        }
        const versioned =
          Reflect.getMetadata(VERSION_METADATA, controller) !== undefined ||
          Reflect.getMetadata(VERSION_METADATA, handler) !== undefined;
        if (versioned && this.nest.getVersioning()) {
          throw refuse('versioning is a filter of the Express router, which is skipped');
        }
        names.push(name);
      }
    }
    return names;
  }

  /** Where Express has the route, and what it runs before it; throws when that cannot be run here. */
  private plan(express: ExpressInternals, name: string): Served[] {
    const stack = express.router.stack;
    const served: Served[] = [];
    stack.forEach((layer, index) => {
      const route = layer.route;
      if (!route?.methods.get || !route.stack.some((handler) => handler.name === name)) return;
      const refuse = (why: string) =>
        new Error(`@FastRoute() on ${name} (GET ${route.path}): ${why}`);
      const before = stack.slice(0, index);
      const middleware = before.filter(
        (earlier) => !earlier.route && earlier.slash && !BODY_ONLY.has(earlier.handle),
      );
      const earlier = before.filter((other) =>
        other.route ? other.route.methods.get : !other.slash,
      );
      const shadow = earlier.find((other) => other.route?.path === route.path);
      if (shadow) throw refuse(`"${shadow.route?.stack[0]?.name}" is registered first for it`);
      served.push({ layer, middleware, earlier });
    });
    if (served.length === 0) throw new Error(`@FastRoute() on ${name}: not a route of Express`);
    return served;
  }

  /** Serves the request when it is a GET of a fast route; false leaves it to Express. */
  private serve(
    express: ExpressInternals,
    routes: Served[],
    request: IncomingMessage,
    response: ServerResponse,
  ): boolean {
    const url = request.url;
    if (request.method !== 'GET' || !url?.startsWith('/')) return false;
    // A body, even empty, is the body parsers' (they are skipped here): Express serves the request.
    const headers = request.headers;
    if (headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined) {
      return false;
    }
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    for (const route of routes) {
      let params: Record<string, string>;
      try {
        const match = route.layer.match(path);
        if (!match) continue;
        // Express would take it elsewhere first (an earlier route, or middleware mounted on a path).
        if (route.earlier.some((other) => other.match(path))) return false;
        params = match.params;
      } catch {
        // A path that does not decode: Express answers it (400).
        return false;
      }
      this.run(express, route, params, request as Request, response as Response);
      return true;
    }
    return false;
  }

  /** What Express' application and router do for the request, without looking for its route. */
  private run(
    express: ExpressInternals,
    { layer, middleware }: Served,
    params: Record<string, string>,
    request: Request,
    response: Response,
  ): void {
    if (express.enabled('x-powered-by')) response.setHeader('X-Powered-By', 'Express');
    request.res = response;
    response.req = request;
    Object.setPrototypeOf(request, express.request);
    Object.setPrototypeOf(response, express.response);
    response.locals ??= Object.create(null) as Response['locals'];
    request.originalUrl = request.url;
    request.baseUrl = '';
    let index = 0;
    const next: Next = (error) => {
      const current = middleware[index++];
      if (current) {
        if (error === undefined) current.handleRequest(request, response, next);
        else current.handleError(error, request, response, next);
        return;
      }
      if (error !== undefined) return unanswered(response, error);
      request.params = params;
      // The route's handler is Nest's: it answers, errors included, and never calls next (checked).
      layer.handleRequest(request, response, (error) => unanswered(response, error));
    };
    next();
  }
}

/**
 * An error no error handler answered (the application registers one, so not expected), or a handler that
 * passed the request on: answered as Express' final handler does, without detail.
 */
function unanswered(response: Response, error: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const status = (error as { status?: unknown } | undefined)?.status;
  response.statusCode = typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
  if (error === undefined) response.statusCode = 404;
  response.end();
}
