import { isMcpPath } from '@/http/routes';

/**
 * Whether `resource` (RFC 8707) names this deployment's MCP endpoint: the issuer's origin and a path of the
 * endpoint (`/mcp`, `P/mcp`), nothing else (no query, no fragment). A token is bound to it: another
 * deployment's endpoint, or a REST route, is not this.
 */
export function isMcpResourcePath(issuer: string, resource: string): boolean {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  return (
    url.origin === new URL(issuer).origin &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    isMcpPath(url.pathname)
  );
}

/** The resource a request to the MCP endpoint is, as its tokens must name it. */
export function mcpResourceOf(issuer: string, path: string): string {
  return `${new URL(issuer).origin}${path}`;
}
