import { Project, projectVersion } from '@/core/project/project';

/**
 * The current layout's path prefix. Controllers mount on {@link CURRENT} (or on the legacy layout's `LEGACY`,
 * `legacy/routes.ts`), where `:project` and `:version` are checked against the served project
 * (ProjectRouteGuard); links in replies and the OpenAPI document use the served project's own prefixes.
 */

/** The current layout: `/api/service-v0/project/{name}/{version}/...`. */
export const CURRENT = 'api/service-v0/project/:project/:version';

/** The served project's current prefix: `/api/service-v0/project/expenses/v1`. */
export function currentPath(project: Project): string {
  return `/api/service-v0/project/${project.name}/${projectVersion(project)}`;
}

/**
 * Whether a request's path is the MCP endpoint's, `P/mcp` or `/mcp` (mcp/mcp.controller.ts), for what
 * runs before routing and for the authorization server, whose tokens are that endpoint's only.
 */
export function isMcpPath(path: string): boolean {
  return path === '/mcp' || /^\/api\/service-v0\/project\/[^/]+\/[^/]+\/mcp$/.test(path);
}

/**
 * Whether a path is a dashboard's page in either layout (`P/dashboards/{name}/results`,
 * `/service-v0/{project}/{version}/dashboard/{name}`): where a browser's session counts (sign-in/), on safe
 * GETs only.
 */
export function isDashboardPagePath(path: string): boolean {
  return (
    /^\/api\/service-v0\/project\/[^/]+\/[^/]+\/dashboards\/[^/]+\/results$/.test(path) ||
    /^\/service-v0\/[^/]+\/[^/]+\/dashboard\/[^/]+$/.test(path)
  );
}
