import {
  CanActivate,
  ExecutionContext,
  Injectable,
  NestMiddleware,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { ApplicationConfig } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { isObservable, lastValueFrom } from 'rxjs';
import { callerOf } from '@/auth/auth.decorators';
import { JsonLogger } from '@/common/json-logger';
import { CURRENT, LEGACY } from '@/common/routes';
import { DatasetsLegacyController } from '@/datasets/datasets.legacy.controller';
import { DatasetsController } from '@/datasets/datasets.controller';
import { DatasetsService } from '@/datasets/datasets.service';
import { CONTENT_TYPES, negotiateFormat } from '@/datasets/stream-formats';
import { Layout, parseQuerySelections } from '@/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

/** The two GET routes the fast path serves, with what Nest's router would give their handlers. */
const ROUTES: {
  layout: Layout;
  pattern: RegExp;
  template: string;
  controller: object;
  handler: (...args: never[]) => unknown;
}[] = [
  {
    layout: 'current',
    pattern: /^\/api\/service-v0\/project\/([^/]+)\/([^/]+)\/datasets\/([^/]+)\/results\/?$/,
    template: `/${CURRENT}/datasets/:dataset/results`,
    controller: DatasetsController,
    // Only a key for the guards' metadata lookups, as Nest's router gives them; never called.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    handler: DatasetsController.prototype.results,
  },
  {
    layout: 'legacy',
    pattern: /^\/service-v0\/([^/]+)\/([^/]+)\/dataset\/([^/]+)\/?$/,
    template: `/${LEGACY}/dataset/:name`,
    controller: DatasetsLegacyController,
    // eslint-disable-next-line @typescript-eslint/unbound-method
    handler: DatasetsLegacyController.prototype.results,
  },
];

/** What a guard sees of a request: the same as when Nest's router runs it for the route. */
function httpContext(
  request: Request,
  response: Response,
  controller: object,
  handler: (...args: never[]) => unknown,
): ExecutionContext {
  const http = {
    getRequest: <T>() => request as T,
    getResponse: <T>() => response as T,
    getNext: <T>() => undefined as T,
  };
  return {
    getType: <T extends string>() => 'http' as T,
    getClass: <T>() => controller as T,
    getHandler: () => handler,
    getArgs: <T extends unknown[]>() => [request, response] as T,
    getArgByIndex: <T>(index: number) => [request, response][index] as T,
    switchToHttp: () => http,
    switchToRpc: () => {
      throw new Error('not an RPC context');
    },
    switchToWs: () => {
      throw new Error('not a WebSocket context');
    },
  };
}

/**
 * The fast path of dataset results. A GET that this process answered already on the current build is
 * answered here, from the kept bytes, before Nest's router, pipes and handler: it runs the very guards
 * Nest runs for the route (the global ones: project check and authentication, a token's record read from
 * Postgres as always), the same scope and selection checks, and writes the same headers. Anything else
 * (no kept response, an error, a guard refusing) goes on untouched to the route, which answers as usual;
 * so the fast path never decides an error, it only skips work. In the profile of a cached request, Nest's
 * routing and per-route machinery were about a fifth of the CPU time.
 *
 * It stays off when the route gets interceptors or guards of its own, which it would not run.
 */
@Injectable()
export class KeptResultsMiddleware implements NestMiddleware, OnApplicationBootstrap {
  private guards?: CanActivate[];

  constructor(
    private readonly config: ApplicationConfig,
    private readonly datasets: DatasetsService,
    private readonly logger: JsonLogger,
  ) {}

  /** The global guards are known once the application is set up. */
  onApplicationBootstrap(): void {
    const own = ROUTES.some(({ controller, handler }) =>
      [GUARDS_METADATA, INTERCEPTORS_METADATA].some(
        (key) => Reflect.hasMetadata(key, controller) || Reflect.hasMetadata(key, handler),
      ),
    );
    const scoped =
      this.config.getGlobalInterceptors().length > 0 ||
      this.config.getGlobalRequestInterceptors().length > 0 ||
      this.config.getGlobalRequestGuards().length > 0;
    if (own || scoped) {
      this.logger.emit(
        'warn',
        'dataset results fast path off: the route has enhancers it would skip',
      );
      return;
    }
    this.guards = this.config.getGlobalGuards();
  }

  use(request: Request, response: Response, next: NextFunction): void {
    if (!this.guards || request.method !== 'GET') return next();
    const path = request.originalUrl.split('?', 1)[0];
    const route = ROUTES.find((candidate) => candidate.pattern.test(path));
    if (!route) return next();
    this.answer(this.guards, route, path, request, response).then(
      (answered) => {
        if (!answered) next();
      },
      () => next(),
    );
  }

  private async answer(
    guards: CanActivate[],
    route: (typeof ROUTES)[number],
    path: string,
    request: Request,
    response: Response,
  ): Promise<boolean> {
    if (negotiateFormat(request.headers.accept) !== 'json') return false;
    // Decoded as Express decodes route parameters (a malformed escape throws: the route answers it).
    const [project, version, name] = (route.pattern.exec(path) ?? [])
      .slice(1)
      .map(decodeURIComponent);
    request.params = { project, version, [route.layout === 'current' ? 'dataset' : 'name']: name };
    const context = httpContext(request, response, route.controller, route.handler);
    for (const guard of guards) {
      const result = guard.canActivate(context);
      const allowed = isObservable(result) ? await lastValueFrom(result) : await result;
      if (!allowed) return false;
    }
    const request_ = parseQuerySelections(request.query as RawQuery, route.layout);
    const ifNoneMatch = request.headers['if-none-match'];
    const reply = await this.datasets.keptReply(callerOf(request), name, request_, ifNoneMatch);
    if (!reply || reply.kind === 'stream') return false;
    // The request log and metrics name the route as when Nest's router serves it.
    (request as { route?: unknown }).route = { path: route.template };
    if (reply.kind === 'not-modified') {
      response.statusCode = 304;
      response.setHeader('ETag', reply.etag);
      response.end();
      return true;
    }
    response.statusCode = 200;
    response.setHeader('Content-Type', CONTENT_TYPES.json);
    if (reply.etag) response.setHeader('ETag', reply.etag);
    response.setHeader('Content-Length', Buffer.byteLength(reply.body));
    response.end(reply.body);
    return true;
  }
}
