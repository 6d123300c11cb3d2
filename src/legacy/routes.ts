import { Project, projectVersion } from '@/core/project/project';

/** The legacy layout's root: `GET /service-v0` lists the served project, as the 0.4 service did. */
export const LEGACY_ROOT = 'service-v0';

/**
 * The legacy layout: `/service-v0/{name}/v{major}/...`, where `:project` and `:version` are checked against
 * the served project as in the current layout (ProjectRouteGuard).
 */
export const LEGACY = `${LEGACY_ROOT}/:project/:version`;

/** The served project's legacy prefix: `/service-v0/expenses/v1`. */
export function legacyPath(project: Project): string {
  return `/${LEGACY_ROOT}/${project.name}/${projectVersion(project)}`;
}

/**
 * Whether a request path is in the legacy layout (its errors are `{detail}`): under `/service-v0/`, and the
 * 0.4 project listing `/service-v0` itself.
 */
export function isLegacyPath(path: string): boolean {
  return path === `/${LEGACY_ROOT}` || path.startsWith(`/${LEGACY_ROOT}/`);
}
