import { Project, projectVersion } from '@/core/project/project';

/**
 * The one home of the two layouts' path prefixes. Controllers mount on {@link CURRENT} or {@link LEGACY},
 * where `:project` and `:version` are checked against the served project (ProjectRouteGuard); links in
 * replies and the OpenAPI document use the served project's own prefixes.
 */

/** The current layout: `/api/service-v0/project/{name}/{version}/...`. */
export const CURRENT = 'api/service-v0/project/:project/:version';

/** The legacy layout's root: `GET /service-v0` lists the served project, as the 0.4 service did. */
export const LEGACY_ROOT = 'service-v0';

/** The legacy layout: `/service-v0/{name}/v{major}/...`. */
export const LEGACY = `${LEGACY_ROOT}/:project/:version`;

/** The served project's current prefix: `/api/service-v0/project/expenses/v1`. */
export function currentPath(project: Project): string {
  return served(CURRENT, project);
}

/** The served project's legacy prefix: `/service-v0/expenses/v1`. */
export function legacyPath(project: Project): string {
  return served(LEGACY, project);
}

function served(route: string, project: Project): string {
  return `/${route.replace(':project', project.name).replace(':version', projectVersion(project))}`;
}

/**
 * Whether a request path is in the legacy layout (its errors are `{detail}`): under `/service-v0/`, and the
 * 0.4 project listing `/service-v0` itself.
 */
export function isLegacyPath(path: string): boolean {
  return path === `/${LEGACY_ROOT}` || path.startsWith(`/${LEGACY_ROOT}/`);
}
