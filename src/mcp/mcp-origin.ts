/**
 * Which browser pages may call the MCP endpoint, as the transport spec asks (against DNS rebinding and
 * cross-site calls): a request from a browser (`Origin`) only when that origin is the service's own (its
 * `Host`) or one of CORS_ORIGINS (`*` allows any). Requests without `Origin` (an assistant is not a browser)
 * pass. The `Host` itself is checked for every route, MCP included, before this (http/request/host-rule.ts).
 * Pure: answers the reason of a refusal, or undefined.
 */
export function refusedCaller(
  request: { host: string | undefined; origin: string | undefined },
  service: { corsOrigins: readonly string[] },
): string | undefined {
  const { origin } = request;
  if (origin === undefined) return undefined;
  if (service.corsOrigins.includes('*') || service.corsOrigins.includes(origin)) return undefined;
  if (isOwnOrigin(origin, request.host)) return undefined;
  return `The Origin ${origin} may not call the MCP server: only the service's own origin or CORS_ORIGINS`;
}

function isOwnOrigin(origin: string, host: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return (
    host !== undefined && url.host === host.toLowerCase() && url.origin === origin.toLowerCase()
  );
}
