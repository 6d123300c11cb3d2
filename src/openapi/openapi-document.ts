import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  DocumentBuilder,
  OpenAPIObject,
  SwaggerModule,
  type OperationObject,
  type PathItemObject,
} from '@nestjs/swagger';
import { ADMIN_SCHEMAS } from '@/openapi/admin-schemas';
import { CATALOG_SCHEMAS } from '@/openapi/catalog-schemas';
import { documentServerRules, ERROR_SCHEMAS } from '@/openapi/common-schemas';
import { projectItemDocs } from '@/openapi/item-paths';
import { RESULT_SCHEMAS } from '@/openapi/result-schemas';
import { PARAMETER_SCHEMAS } from '@/openapi/parameter-schemas';
import { MCP_SCHEMAS, mcpPaths } from '@/openapi/mcp-paths';
import {
  generated,
  SWAGGER_UI_OPTIONS,
  swaggerUiAssets,
  swaggerUiPolicy,
} from '@/openapi/swagger-ui';
import { documentPasswordPolicy, userResponseSchemas, userSchemas } from '@/openapi/user-schemas';
import { currentPath } from '@/http/routes';
import type { Project } from '@/core/project/project';

/**
 * The one place the OpenAPI document is put together: what the controllers' decorators say, the schemas
 * they name, each dataset's and dashboard's own paths, and the rules that depend on the settings. The
 * settings arrive as plain values because config/ sits on a floor above this room.
 */
export interface DocsSettings {
  /** The service's version (`SERVICE_VERSION`). */
  version: string;
  /** MAX_RESULT_ROWS: the bound of every `x_limit`. */
  maxResultRows: number;
  /** PASSWORD_MIN_LENGTH: the bound of every new password. */
  passwordMinLength: number;
}

/** The document of `project` as served, from the routes `app` has. */
export function buildDocument(
  app: NestExpressApplication,
  project: Project,
  settings: DocsSettings,
): OpenAPIObject {
  // Without the leading slash, as SwaggerModule.setup takes paths.
  const prefix = currentPath(project).slice(1);
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(`Drey: ${project.label}`)
      .setDescription(
        // Read by Swagger UI and ReDoc alike: only Swagger UI (`/docs`) has an Authorize button.
        `${project.description}\n\nSign in with \`POST /${prefix}/login\` (the OAuth2 password flow; in Swagger UI, \`/docs\`, its Authorize button does it) and send the token as \`Authorization: Bearer <token>\`. A method that a path does not take is answered 405 \`method_not_allowed\` with \`Allow\`.`,
      )
      .setVersion(settings.version)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      // The MCP endpoint's alone (docs/mcp.md): a Drey token for a headless client that sends an API key.
      .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key' }, 'apiKey')
      .addOAuth2(
        { type: 'oauth2', flows: { password: { tokenUrl: `/${prefix}/login`, scopes: {} } } },
        'login',
      )
      .build(),
  );
  // Schemas the decorators refer to by name, and each item's own paths and schemas.
  const items = projectItemDocs(project, prefix, settings.maxResultRows);
  document.components = document.components ?? {};
  document.components.schemas = {
    ...document.components.schemas,
    ...ERROR_SCHEMAS,
    ...CATALOG_SCHEMAS,
    ...PARAMETER_SCHEMAS,
    ...RESULT_SCHEMAS,
    ...ADMIN_SCHEMAS,
    ...MCP_SCHEMAS,
    ...userSchemas(project.userFields),
    ...userResponseSchemas(project.userFields),
    ...items.schemas,
  };
  Object.assign(document.paths, items.paths, mcpPaths(prefix));
  orderTags(document);
  plainSummaries(document);
  documentServerRules(document, settings.maxResultRows);
  documentPasswordPolicy(document, settings.passwordMinLength);
  return document;
}

/**
 * The sections of Swagger UI and ReDoc, in the order a reader meets them: the project and signing in first,
 * then reading data, then what administrators and operators use, and the legacy layout last. Both pages
 * follow the document's `tags`; without it they follow the first path of each tag, which put `admin` first.
 * A tag that no operation uses is left out; one this list lacks goes at the end, so none is lost.
 */
const TAGS: [string, string][] = [
  ['project', 'The project served: its name, version and description'],
  ['authentication', 'Signing in, named tokens, the caller'],
  ['catalog', 'The datasets and dashboards the caller may open'],
  ['parameters', 'Parameter widgets, cascading'],
  ['datasets', 'Dataset results, by name'],
  ['datasets (this project)', "This project's datasets, each with its own selections and columns"],
  ['dashboards', 'Dashboards, by name'],
  ['dashboards (this project)', "This project's dashboards, each with its own selections"],
  ['mcp', 'The MCP server, for AI assistants (docs/mcp.md)'],
  ['embedding', 'Tokens that open one item, for embedding it (docs/embedding.md)'],
  ['users', 'Users and their fields'],
  ['admin', 'Builds, query-models and the audit log (administrators)'],
  ['health', 'Liveness and readiness'],
  ['legacy', 'The legacy layout, `/service-v0/{project}/v{major}/...`'],
];

function orderTags(document: OpenAPIObject): void {
  const used = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const operation of operationsOf(item)) operation.tags?.forEach((tag) => used.add(tag));
  }
  const known = new Map(TAGS);
  const described = new Map((document.tags ?? []).map((tag) => [tag.name, tag]));
  document.tags = [
    ...TAGS.map(([name]) => name).filter((name) => used.has(name)),
    ...[...used].filter((name) => !known.has(name)),
  ].map((name) => described.get(name) ?? { name, description: known.get(name) });
}

/**
 * An operation's `summary` is plain text (OpenAPI; Swagger UI and ReDoc print it as it is), while the
 * controllers' JSDoc, which the @nestjs/swagger plugin makes the summary, is Markdown: its backticks would
 * show. The summary keeps the words without them; the Markdown goes to `description`, which both pages
 * render, when the operation has none.
 */
function plainSummaries(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of operationsOf(item)) {
      const summary = operation.summary;
      if (summary === undefined || !summary.includes('`')) continue;
      operation.description ??= summary;
      operation.summary = summary.replaceAll('`', '');
    }
  }
}

function operationsOf(item: PathItemObject): OperationObject[] {
  return (['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const).flatMap(
    (method) => (item[method] ? [item[method]] : []),
  );
}

/**
 * Swagger UI at `/docs` and `P/docs`; the OpenAPI document at `/docs-json` and `P/docs-json`, which ReDoc
 * (DocsModule) draws too. Called before `app.init()`, as Swagger UI's routes are Express routes.
 */
export function setUpDocs(
  app: NestExpressApplication,
  project: Project,
  settings: DocsSettings,
): void {
  const document = buildDocument(app, project, settings);
  const prefix = currentPath(project).slice(1);
  // Registered before Swagger UI's own routes, so they run first: the pages' policy in place of the API's.
  app.use(['/docs', `/${prefix}/docs`], swaggerUiPolicy(), swaggerUiAssets());
  app.use(['/docs-json', `/${prefix}/docs-json`], generated);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    ...SWAGGER_UI_OPTIONS,
  });
  SwaggerModule.setup(`${prefix}/docs`, app, document, {
    jsonDocumentUrl: `${prefix}/docs-json`,
    ...SWAGGER_UI_OPTIONS,
  });
}
