import { isIP } from 'node:net';
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';

/**
 * What may call the MCP endpoint, as the transport spec asks (against DNS rebinding): a service bound to
 * a loopback address answers only requests whose `Host` is a loopback name (the SDK's check: a page of
 * evil.example whose name was made to resolve to 127.0.0.1 still sends `Host: evil.example`); and a
 * request from a browser (`Origin`) only when that origin is the service's own (the validated `Host`) or
 * one of CORS_ORIGINS (`*` allows any). Requests without `Origin` (an assistant is not a browser) pass.
 * Pure: answers the reason of a refusal, or undefined.
 */
export function refusedCaller(
  request: { host: string | undefined; origin: string | undefined },
  service: { bindHost: string; corsOrigins: readonly string[] },
): string | undefined {
  if (isLoopback(service.bindHost)) {
    const host = validateHostHeader(request.host, localhostAllowedHostnames());
    if (!host.ok) {
      return `The MCP server of a service bound to ${service.bindHost} answers Host localhost, 127.0.0.1 or [::1] only`;
    }
  }
  const { origin } = request;
  if (origin === undefined) return undefined;
  if (service.corsOrigins.includes('*') || service.corsOrigins.includes(origin)) return undefined;
  if (isOwnOrigin(origin, request.host)) return undefined;
  return `The Origin ${origin} may not call the MCP server: only the service's own origin or CORS_ORIGINS`;
}

function isLoopback(bindHost: string): boolean {
  if (bindHost === 'localhost') return true;
  if (isIP(bindHost) === 4) return bindHost.startsWith('127.');
  return bindHost === '::1';
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
