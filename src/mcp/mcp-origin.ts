/**
 * The `Origin` check of the MCP endpoint (the transport spec asks servers to validate it, against DNS
 * rebinding): no `Origin` (an assistant that is not a browser) passes; a browser's passes when it is the
 * service's own (the request's `Host`) or one of CORS_ORIGINS (`*` allows any). Pure.
 *
 * Our own rather than the SDK's `originValidation()`: that one compares host names only, without the
 * port or scheme, and answers the response itself; this one compares whole origins and lets the error
 * filter answer the 403 in the layout's shape.
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  corsOrigins: readonly string[],
): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return true;
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
