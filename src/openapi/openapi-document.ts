import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_SCHEMAS } from '@/openapi/admin-schemas';
import { CATALOG_SCHEMAS } from '@/openapi/catalog-schemas';
import { documentServerRules, ERROR_SCHEMAS } from '@/openapi/common-schemas';
import { projectItemDocs } from '@/openapi/item-paths';
import { RESULT_SCHEMAS } from '@/openapi/result-schemas';
import { PARAMETER_SCHEMAS } from '@/openapi/parameter-schemas';
import { MCP_SCHEMAS, mcpPaths } from '@/openapi/mcp-paths';
import { generated, swaggerUiAssets, swaggerUiPolicy } from '@/openapi/swagger-ui';
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
        `${project.description}\n\nSign in with the Authorize button (OAuth2 password flow on \`/${prefix}/login\`) or paste a bearer token. A method that a path does not take is answered 405 \`method_not_allowed\` with \`Allow\`.`,
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
  documentServerRules(document, settings.maxResultRows);
  documentPasswordPolicy(document, settings.passwordMinLength);
  return document;
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
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  SwaggerModule.setup(`${prefix}/docs`, app, document, { jsonDocumentUrl: `${prefix}/docs-json` });
}
