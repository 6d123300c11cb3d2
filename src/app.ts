import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import { AppModule } from '@/app.module';
import { sendError } from '@/http/errors/http-error.filter';
import { JsonLogger } from '@/http/request/json-logger';
import { refuseDeepJson } from '@/http/input/json-depth';
import {
  BODY_LIMIT_BYTES,
  FORM_LIMITS,
  parseQuery,
  requestLimits,
  storableBodies,
} from '@/http/input/input-limits';
import { RequestObserver, requestLogging } from '@/http/request/request-context';
import { MetricsService } from '@/metrics/metrics.service';
import { AppConfig } from '@/config/config';
import { SERVICE_VERSION } from '@/config/service-version';
import { resolveSecrets } from '@/config/secrets';
import type { Project } from '@/core/project/project';
import { currentPath } from '@/http/routes';
import { ServedProject } from '@/core/project/served-project';
import { documentPasswordPolicy, userResponseSchemas, userSchemas } from '@/openapi/user-schemas';
import { projectItemDocs, RESULT_SCHEMAS } from '@/openapi/item-paths';
import { ADMIN_SCHEMAS } from '@/openapi/admin-schemas';
import { CATALOG_SCHEMAS } from '@/openapi/catalog-schemas';
import { documentServerRules, ERROR_SCHEMAS } from '@/openapi/common-schemas';
import { PARAMETER_SCHEMAS } from '@/openapi/parameter-schemas';
import { FastRoutes } from '@/http/fast-route/fast-routes';
import { fastRouteSafe } from '@/http/fast-route/fast-route-safe';
import { securityHeaders } from '@/http/security-headers';
import { swaggerUiPolicy } from '@/openapi/swagger-ui';

/** Builds the application as `main.ts` serves it. */
export async function createApp(
  config: AppConfig,
  logger: JsonLogger,
): Promise<NestExpressApplication> {
  const secrets = resolveSecrets(config);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, logger, secrets),
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
  // The bounds of http/input/input-limits.ts: the URL, the body's declared size and charset, before any parser
  // reads a byte; the body's strings once parsed. Multipart (the login form) is read by LoginGuard.
  app.use(
    fastRouteSafe(
      requestLimits(fail),
      `the fast route checks the URL with the same checkUrl, and ${noBody}`,
    ),
  );
  app.use(fastRouteSafe(express.json({ limit: BODY_LIMIT_BYTES, verify: refuseDeepJson }), noBody));
  app.use(
    fastRouteSafe(
      express.urlencoded({
        extended: false,
        limit: BODY_LIMIT_BYTES,
        parameterLimit: FORM_LIMITS.fields,
      }),
      noBody,
    ),
  );
  app.use(fastRouteSafe(storableBodies(fail), noBody));
  // A body that does not parse is the client's error, answered in the layout's shape.
  app.use((error: unknown, request: Request, response: Response, next: NextFunction) => {
    if (!error) return next();
    fail(error, request, response);
  });
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      allowedHeaders: ['Authorization', 'Content-Type'],
      exposedHeaders: ['Applied-Username', 'X-Request-Id'],
    });
  }

  // The document of the project served at start (its datasets' own paths included).
  setUpDocs(app, app.get(ServedProject).current, config);
  await app.init();
  // Routes marked @FastRoute() are served in front of Express' router and middleware (see FastRoutes).
  app.get(FastRoutes).attach(app, observe, config.corsOrigins.length > 0);
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
 * Swagger UI at `/docs` and `P/docs`; the OpenAPI document at `/docs-json` and `P/docs-json`, which ReDoc
 * (DocsModule) draws too.
 */
function setUpDocs(app: NestExpressApplication, project: Project, config: AppConfig): void {
  const maxRows = config.maxResultRows;
  // Without the leading slash, as SwaggerModule.setup takes paths.
  const prefix = currentPath(project).slice(1);
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(`Drey: ${project.label}`)
      .setDescription(
        `${project.description}\n\nSign in with the Authorize button (OAuth2 password flow on \`/${prefix}/login\`) or paste a bearer token. A method that a path does not take is answered 405 \`method_not_allowed\` with \`Allow\`.`,
      )
      .setVersion(SERVICE_VERSION)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .addOAuth2(
        { type: 'oauth2', flows: { password: { tokenUrl: `/${prefix}/login`, scopes: {} } } },
        'login',
      )
      .build(),
  );
  // Schemas the decorators refer to by name, and each item's own paths and schemas.
  const items = projectItemDocs(project, prefix, maxRows);
  document.components = document.components ?? {};
  document.components.schemas = {
    ...document.components.schemas,
    ...ERROR_SCHEMAS,
    ...CATALOG_SCHEMAS,
    ...PARAMETER_SCHEMAS,
    ...RESULT_SCHEMAS,
    ...ADMIN_SCHEMAS,
    ...userSchemas(project.userFields),
    ...userResponseSchemas(project.userFields),
    ...items.schemas,
  };
  Object.assign(document.paths, items.paths);
  documentServerRules(document, maxRows);
  documentPasswordPolicy(document, config.passwordMinLength);
  // Registered before Swagger UI's own routes, so they run first: the pages' policy in place of the API's.
  app.use(['/docs', `/${prefix}/docs`], swaggerUiPolicy());
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  SwaggerModule.setup(`${prefix}/docs`, app, document, { jsonDocumentUrl: `${prefix}/docs-json` });
}
