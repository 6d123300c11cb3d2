import { RequestMethod } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  FILTER_CATCH_EXCEPTIONS,
  GUARDS_METADATA,
  HOST_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { ApplicationConfig } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { whySafe } from '@/http/fast-route/fast-route-safe';

/**
 * What start-up reads of Express 5's router (the `router` package): each layer of the app's stack, a route
 * or a middleware, in the order a request meets them.
 */
export interface RouterLayer {
  /** The function's name, as Express keeps it. */
  name: string;
  handle: object & { length: number };
  /** Mounted on `/`: matches every path. */
  slash: boolean;
  route?: {
    path: string;
    methods: Record<string, boolean | undefined>;
    stack: { name: string; handle: object }[];
  };
  match(path: string): { params: Record<string, string> } | false;
}

/** Built-in parameters a fast route can hand over: Nest reads them from what the fast route sets. */
const PARAMETERS_SERVED = new Set<number>([
  RouteParamtypes.PARAM,
  RouteParamtypes.QUERY,
  RouteParamtypes.HEADERS,
]);

/** Why a fast route cannot take each of the other built-in parameters. */
const PARAMETERS_REFUSED: Partial<Record<RouteParamtypes, string>> = {
  [RouteParamtypes.REQUEST]:
    "@Req(): the handler would get Node's request, not Express' (no req.get(), req.ip, ...); return an HttpReply and read the request through @Param, @Query, @Headers or a parameter decorator",
  [RouteParamtypes.RESPONSE]:
    "@Res(): the handler would get Node's response, not Express' (no res.status(), res.json(), ...); return an HttpReply instead",
  [RouteParamtypes.NEXT]: '@Next(): there is no next route to call',
  [RouteParamtypes.BODY]:
    '@Body(): a request with a body goes to Express, so it never has one here',
  [RouteParamtypes.RAW_BODY]:
    '@RawBody(): a request with a body goes to Express, so it never has one here',
  [RouteParamtypes.SESSION]: '@Session(): the session middleware is skipped',
  [RouteParamtypes.FILE]: '@UploadedFile(): the upload middleware is skipped',
  [RouteParamtypes.FILES]: '@UploadedFiles(): the upload middleware is skipped',
  [RouteParamtypes.HOST]:
    '@HostParam(): host routing is a filter of the Express router, which is skipped',
  [RouteParamtypes.IP]: "@Ip(): it reads Express' req.ip, which Node's request does not have",
};

const ENHANCERS: [string, string][] = [
  [GUARDS_METADATA, 'guard'],
  [INTERCEPTORS_METADATA, 'interceptor'],
  [PIPES_METADATA, 'pipe'],
  [EXCEPTION_FILTERS_METADATA, 'exception filter'],
];

type Metatype = abstract new (...args: never[]) => unknown;

function nameOf(enhancer: unknown): string {
  if (typeof enhancer === 'function') return enhancer.name || 'an anonymous class';
  const type = (enhancer as object | null)?.constructor;
  return type?.name ? `an instance of ${type.name}` : 'an anonymous one';
}

/**
 * What the route's handler asks for that the fast route cannot give: a method other than GET, what only
 * Express' router or response does (`@Redirect`, `@Render`, `@Sse`, host and version routing), and any
 * built-in parameter besides `@Param`, `@Query` and `@Headers`. Undefined when there is nothing.
 */
export function handlerProblem(
  controller: Metatype,
  method: string,
  callback: object,
  versioning: boolean,
): string | undefined {
  if (Reflect.getMetadata(METHOD_METADATA, callback) !== RequestMethod.GET) {
    return 'only GET routes can be fast';
  }
  for (const [key, what] of [
    [REDIRECT_METADATA, '@Redirect()'],
    [RENDER_METADATA, '@Render()'],
    [SSE_METADATA, '@Sse()'],
  ]) {
    if (Reflect.getMetadata(key, callback) !== undefined) return `${what} is not run here`;
  }
  if (Reflect.getMetadata(HOST_METADATA, controller) !== undefined) {
    return 'host routing is a filter of the Express router, which is skipped';
  }
  const versioned =
    Reflect.getMetadata(VERSION_METADATA, controller) !== undefined ||
    Reflect.getMetadata(VERSION_METADATA, callback) !== undefined;
  if (versioned && versioning) {
    return 'versioning is a filter of the Express router, which is skipped';
  }
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    unknown
  >;
  for (const key of Object.keys(args)) {
    // Built-in parameters are keyed `<type>:<index>`; parameter decorators `<id>__customRouteArgs__:<index>`.
    const type = Number(key.split(':', 1)[0]);
    if (Number.isNaN(type) || PARAMETERS_SERVED.has(type)) continue;
    const why = PARAMETERS_REFUSED[type as RouteParamtypes];
    return `the handler takes ${why ?? `a built-in parameter of type ${type} that it cannot serve`}`;
  }
  return undefined;
}

/**
 * The enhancers the fast route cannot run, and the controller it cannot call. It runs the route's guards,
 * interceptors, pipes and exception filters through Nest's own context machinery with one instance each, as
 * Nest's router does for a route whose dependency tree is static. So it refuses:
 * - a controller, or an enhancer given as a class (on the controller, the method or a parameter), that is
 *   request-scoped or depends on something that is (Nest makes those per request; the fast route would get
 *   an instance Nest never built, or none, and skip a guard);
 * - an enhancer class that is not a provider of the controller's module (Nest would leave it out);
 * - a global enhancer that is request-scoped (Nest's router resolves it per request);
 * - a route with no exception filter that catches everything, route-scoped or global: Nest's fallback
 *   writes with Express' response methods, which a fast request's response does not have.
 * Enhancers given as instances are run as they are. Undefined when there is nothing to refuse.
 */
export function enhancerProblem(
  wrapper: InstanceWrapper,
  method: string,
  callback: object,
  nest: ApplicationConfig,
): string | undefined {
  const controller = wrapper.metatype as Metatype;
  const module = wrapper.host;
  const isStatic = (enhancer: unknown, what: string): string | undefined => {
    if (typeof enhancer !== 'function') return undefined;
    const provider = module?.injectables.get(enhancer as Metatype);
    if (!provider) return `its ${what} ${nameOf(enhancer)} is not a provider of its module`;
    if (!provider.isDependencyTreeStatic()) {
      return `its ${what} ${nameOf(enhancer)} is request-scoped or depends on a request-scoped provider`;
    }
    return undefined;
  };
  const filters: unknown[] = [...nest.getGlobalFilters()];
  for (const [key, what] of ENHANCERS) {
    const enhancers = [
      ...((Reflect.getMetadata(key, controller) ?? []) as unknown[]),
      ...((Reflect.getMetadata(key, callback) ?? []) as unknown[]),
    ];
    for (const enhancer of enhancers) {
      const problem = isStatic(enhancer, what);
      if (problem) return problem;
    }
    if (key === EXCEPTION_FILTERS_METADATA) filters.push(...enhancers);
  }
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    { index: number; pipes?: unknown[] }
  >;
  for (const { index, pipes } of Object.values(args)) {
    for (const pipe of pipes ?? []) {
      const problem = isStatic(pipe, `pipe of parameter ${index}`);
      if (problem) return problem;
    }
  }
  for (const [scoped, what] of [
    [nest.getGlobalRequestGuards(), 'guard'],
    [nest.getGlobalRequestInterceptors(), 'interceptor'],
    [nest.getGlobalRequestPipes(), 'pipe'],
    [nest.getGlobalRequestFilters(), 'exception filter'],
  ] as const) {
    if (scoped.length > 0) {
      return `the global ${what} ${String(scoped[0].name)} is request-scoped or depends on a request-scoped provider`;
    }
  }
  if (!filters.some(catchesEverything)) {
    return "no exception filter catches every error (route-scoped or global, @Catch() with no types): Nest's fallback needs Express' response";
  }
  if (!wrapper.isDependencyTreeStatic()) {
    return 'its controller is request-scoped or depends on a request-scoped provider';
  }
  return undefined;
}

function catchesEverything(filter: unknown): boolean {
  const type = typeof filter === 'function' ? filter : (filter as object).constructor;
  const caught = Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, type) as unknown[] | undefined;
  return !caught || caught.length === 0;
}

/** How a route's layer stands to the layers before it in Express' stack. */
export interface Preceding {
  /** Layers that match some of the route's paths but not all: a request they match goes to Express. */
  earlier: RouterLayer[];
  /** Why the route cannot be fast: a layer before it applies to every request of the route. */
  problem?: string;
}

/** What start-up needs to know of the app besides its router: Nest's hooks and whether CORS is on. */
export interface Surroundings {
  /** Nest's Express adapter has an `onRequest` or `onResponse` hook set (`setOnRequestHook`, ...). */
  adapterHooks: boolean;
  /** CORS is on: requests with an `Origin` go to Express, so its CORS middleware is not skipped for them. */
  cors: boolean;
}

/**
 * The layers registered before the route's (at `index` of `stack`) that a GET of it would meet in Express:
 * app-level middleware (`app.use()` at `/`), middleware mounted on a path (`app.use(path, ...)`, Nest's
 * `forRoutes(...)`), routes and route-level middleware for GET or every method. The fast route skips them, so:
 * - one declared with {@link fastRouteSafe} is skipped, for the reason it gives;
 * - error-handling middleware (four arguments) is skipped: Express runs it only for an error of middleware
 *   before it, and the fast route runs none;
 * - Nest's Express adapter puts a middleware of its own first, which runs only its request and response
 *   hooks: skipped while none is set, refused when one is;
 * - with CORS on, the `cors` package's middleware (which Nest's `enableCors` adds, and which the app cannot
 *   declare) is skipped: requests with an `Origin`, the only ones a browser reads its headers for, go to
 *   Express;
 * - any other that applies to the route's template (every path of it) is refused;
 * - any other that can match only some of its paths is kept: a request it matches goes to Express.
 */
export function preceding(
  stack: RouterLayer[],
  index: number,
  template: string,
  around: Surroundings,
): Preceding {
  const earlier: RouterLayer[] = [];
  for (let at = 0; at < index; at++) {
    const layer = stack[at];
    const handles = layer.route
      ? [...layer.route.stack.map((entry) => entry.handle)]
      : [layer.handle];
    if (layer.route && !layer.route.methods.get && !layer.route.methods._all) continue;
    if (!layer.route && layer.handle.length === 4) continue;
    if (handles.every((handle) => whySafe(handle) !== undefined)) continue;
    const what = layer.route
      ? `the route or route middleware "${layer.route.stack.map((entry) => entry.name).join(', ')}" (GET ${layer.route.path})`
      : `the middleware "${layer.name}" (number ${at + 1} in Express' stack)`;
    if (at === 0 && !layer.route && layer.slash && layer.name === '<anonymous>') {
      if (around.adapterHooks) {
        return {
          earlier,
          problem:
            "Nest's request or response hook (setOnRequestHook, setOnResponseHook) would not run",
        };
      }
      continue;
    }
    if (around.cors && layer.name === 'corsMiddleware') continue;
    let applies: boolean;
    try {
      applies = layer.slash || layer.match(template) !== false;
    } catch {
      applies = false;
    }
    if (applies) {
      return {
        earlier,
        problem: `${what} comes first and would be skipped; declare it with fastRouteSafe(middleware, reason) if the fast route does what it does or it has nothing to do for the route`,
      };
    }
    earlier.push(layer);
  }
  return { earlier };
}
