import { isLoopbackHost } from '@/config/loopback';
import { isMcpPath } from '@/http/routes';

/** A URL's host without brackets, as `isLoopbackHost` takes it. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Whether `resource` (RFC 8707) names this deployment's MCP endpoint: a path of the endpoint (`/mcp`,
 * `P/mcp`), nothing else (no query, no fragment, no user), on the issuer's origin. With `loopbackNames` (a
 * service bound to loopback without PUBLIC_URL), any loopback name of the issuer's scheme and port counts as
 * its origin: `localhost` and `127.0.0.1` are the same server. A token is bound to it: another deployment's
 * endpoint, or a REST route, is not this.
 */
export function isMcpResourcePath(
  issuer: string,
  resource: string,
  loopbackNames = false,
): boolean {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || !isMcpPath(url.pathname)) {
    return false;
  }
  const own = new URL(issuer);
  if (url.origin === own.origin) return true;
  return (
    loopbackNames &&
    url.protocol === own.protocol &&
    url.port === own.port &&
    isLoopbackHost(hostOf(url)) &&
    isLoopbackHost(hostOf(own))
  );
}

/** The resource a request to the MCP endpoint is, as its tokens must name it: `origin` and the path. */
export function mcpResourceOf(origin: string, path: string): string {
  return `${new URL(origin).origin}${path}`;
}
