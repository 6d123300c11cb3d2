import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';
import { AppModule } from '@/app.module';
import { sendError } from '@/http/errors/http-error.filter';
import { JsonLogger } from '@/runtime/json-logger';
import { refuseDeepJson } from '@/http/input/json-depth';
import {
  BODY_LIMIT_BYTES,
  FORM_LIMITS,
  parseQuery,
  requestLimits,
  storableBodies,
} from '@/http/input/input-limits';
import { RequestObserver, requestLogging } from '@/http/request/request-logging';
import { MetricsService } from '@/metrics/metrics.service';
import { AppConfig } from '@/config/config';
import { SERVICE_VERSION } from '@/config/service-version';
import { resolveSecrets } from '@/config/secrets';
import { ServedProject } from '@/core/project/served-project';
import type { Project } from '@/core/project/project';
import { setUpDocs } from '@/openapi/openapi-document';
import { FastRoutes } from '@/http/fast-route/fast-routes';
import { fastRouteSafe } from '@/http/fast-route/fast-route-safe';
import { limitStreamedBody } from '@/http/input/streamed-body-limit';
import { securityHeaders } from '@/http/security-headers';
import { checkHost, hostRuleOf } from '@/http/request/host-rule';
import { isMcpPath } from '@/http/routes';
import { isOAuthLibraryPath } from '@/oauth/oauth-paths';

/** Builds the application as `main.ts` serves it. */
export async function createApp(
  config: AppConfig,
  logger: JsonLogger,
  project?: Project,
): Promise<NestExpressApplication> {
  const secrets = resolveSecrets(config);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, logger, secrets, project),
    {
      logger,
      bodyParser: false,
      abortOnError: false,
    },
  );
  return configureApp(app, config, logger);
}

/**
 * Everything the application needs besides its modules: security headers, body parsers, request logging,
 * CORS, the fast routes, the OpenAPI document (DTO validation is per controller: `ValidateDtos`). `main.ts` (through {@link createApp}) and the in-process specs (an application
 * made by `@nestjs/testing`) both call it, so the specs run the application as it is served.
 */
export async function configureApp(
  app: NestExpressApplication,
  config: AppConfig,
  logger: JsonLogger,
): Promise<NestExpressApplication> {
  const http = app.getHttpAdapter().getInstance();
  http.disable('x-powered-by');
  // Hashing every body for an ETag costs time on every response; results set their own where useful.
  http.set('etag', false);
  onlyConditionalWithValidator(http.request as Request);
  http.set('trust proxy', false);
  // Repeated names become arrays (`category=0&category=1`); no nested objects from brackets. Its bounds are
  // checked once per request by requestLimits, before anything reads `req.query`.
  http.set('query parser', parseQuery);

  const metrics = app.get(MetricsService);
  const observe: RequestObserver = (...args) => metrics.observeRequest(...args);
  // Each app-level middleware is declared safe for the fast routes to skip, with the reason; start-up refuses a
  // fast route that an undeclared one applies to (http/fast-route/fast-route-checks.ts).
  const noBody = 'a request with a body goes to Express, not to a fast route';
  // First, so that every response has them, a body parser's refusal included.
  app.use(fastRouteSafe(securityHeaders(), 'the fast route sets the same headers itself'));
  app.use(
    fastRouteSafe(
      requestLogging(logger, observe),
      'the fast route gives the request its id and context, and writes its log line and metrics itself',
    ),
  );
  const fail = (error: unknown, request: Request, response: Response) =>
    sendError(logger, error, request, response);
  // Bound to loopback, only loopback names (and ALLOWED_HOSTS) are answered, on every route (DNS rebinding);
  // before anything reads the request's body or its caller.
  const hosts = hostRuleOf(config.host, config.allowedHosts);
  app.use(
    fastRouteSafe(
      checkHost(hosts, logger, fail),
      'the fast route leaves a request whose Host the same rule refuses to Express',
    ),
  );
  // The bounds of http/input/input-limits.ts: the URL, the body's declared size and charset, before any parser
  // reads a byte; the body's strings once parsed. Multipart (the login form) is read by LoginGuard.
  app.use(
    fastRouteSafe(
      requestLimits(fail),
      `the fast route checks the URL with the same checkUrl, and ${noBody}`,
    ),
  );
  // A chunked body is refused at the limit, not once body-parser has read it to its end.
  app.use(
    fastRouteSafe(
      limitStreamedBody(
        notForOAuth(express.json({ limit: BODY_LIMIT_BYTES, verify: refuseDeepJson })),
        fail,
      ),
      noBody,
    ),
  );
  app.use(
    fastRouteSafe(
      limitStreamedBody(
        notForOAuth(
          express.urlencoded({
            extended: false,
            limit: BODY_LIMIT_BYTES,
            parameterLimit: FORM_LIMITS.fields,
          }),
        ),
        fail,
      ),
      noBody,
    ),
  );
  // An MCP call applies the same rules to its arguments itself (core/input-rules.ts), where its refusal is
  // audited and counted at every door, stdio included; the rest of its body is the SDK's to refuse.
  app.use(fastRouteSafe(storableBodies(fail, isMcpPath), noBody));
  // A body that does not parse is the client's error, answered in the layout's shape.
  app.use((error: unknown, request: Request, response: Response, next: NextFunction) => {
    if (!error) return next();
    fail(error, request, response);
  });
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      // The MCP transport's own headers too, for an assistant that runs in a browser (docs/mcp.md).
      allowedHeaders: [
        'Authorization',
        'Content-Type',
        'Mcp-Protocol-Version',
        'Mcp-Session-Id',
        // The MCP endpoint's API key (credentials.ts); other routes ignore it.
        'X-Api-Key',
        'Mcp-Method',
        'Mcp-Name',
        'Last-Event-ID',
      ],
      exposedHeaders: ['Applied-Username', 'X-Request-Id', 'Mcp-Session-Id', 'WWW-Authenticate'],
    });
  }

  // The document of the project served at start (its datasets' own paths included).
  setUpDocs(app, app.get(ServedProject).current, {
    version: SERVICE_VERSION,
    maxResultRows: config.maxResultRows,
    passwordMinLength: config.passwordMinLength,
  });
  await app.init();
  // Routes marked @FastRoute() are served in front of Express' router and middleware (see FastRoutes).
  app.get(FastRoutes).attach(app, observe, { cors: config.corsOrigins.length > 0, hosts });
  return app;
}

/**
 * Express answers 304 with no body to `If-None-Match: *` on any GET whose answer is a 2xx (`req.fresh`, which
 * `res.send` reads): the fuzzer got 304 from `me`, `users`, catalogs... whose document lists no 304 and which
 * send no validator. A 304 is answered only where the response carries an `ETag` (dataset results set theirs,
 * and answer their own 304s); elsewhere the precondition is ignored (RFC 9110 §13.1.2 allows ignoring it where
 * the server keeps no validator). Set once on this application's request prototype: no per-request cost.
 */
function onlyConditionalWithValidator(requestPrototype: Request): void {
  if (!Object.getOwnPropertyDescriptor(express.request, 'fresh')) {
    throw new Error("Express' request has no `fresh` getter to restrict");
  }
  Object.defineProperty(requestPrototype, 'fresh', {
    configurable: true,
    get(this: Request): boolean {
      return (
        this.res?.getHeader('ETag') !== undefined &&
        Reflect.get<Request, 'fresh'>(express.request, 'fresh', this)
      );
    },
  });
}

/**
 * A body parser for every path but the authorization server's endpoints, whose library reads and bounds
 * its bodies itself (oauth/oauth-paths.ts).
 */
function notForOAuth(parser: express.RequestHandler): express.RequestHandler {
  return (request, response, next) =>
    isOAuthLibraryPath(request.path) ? next() : parser(request, response, next);
}
