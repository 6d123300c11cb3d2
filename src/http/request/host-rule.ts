import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError } from '@/core/errors';
import { isLoopbackHost } from '@/config/loopback';
import type { JsonLogger } from '@/runtime/json-logger';

/**
 * The `Host` names a service bound to a loopback address answers (DNS rebinding: a page of evil.example
 * whose name was made to resolve to 127.0.0.1 reaches the service, but its browser still sends
 * `Host: evil.example`). Off (undefined) when the service is bound to anything else: then a proxy or a load
 * balancer in front decides which names reach it.
 */
export interface HostRule {
  /** Lower-case names, IPv6 addresses in brackets, as a `Host` header carries them without its port. */
  names: ReadonlySet<string>;
  /**
   * The names the refusal lists: the loopback ones and the bound address, not ALLOWED_HOSTS' (a rebinding
   * page reads the refusal, as it is same-origin with itself; the names of an internal proxy are not its to
   * learn).
   */
  listed: string;
}

/** The loopback names every client of a local service uses (the MCP SDK's `localhostAllowedHostnames`). */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The rule of a service bound to `bindHost` (HOST), with ALLOWED_HOSTS' extra names; undefined (no rule)
 * when it is not bound to loopback. The bound address itself is a name too (HOST=127.0.0.2 is reached as
 * http://127.0.0.2:4465).
 */
export function hostRuleOf(
  bindHost: string,
  allowedHosts: readonly string[],
): HostRule | undefined {
  if (!isLoopbackHost(bindHost)) return undefined;
  const own = bindHost.includes(':') ? `[${bindHost.toLowerCase()}]` : bindHost.toLowerCase();
  const listed = [...new Set([...LOOPBACK_NAMES, own])];
  return { names: new Set([...listed, ...allowedHosts]), listed: listed.join(', ') };
}

/**
 * RFC 9110 §7.2 `Host = uri-host [ ":" port ]`, with uri-host a name or an IPv4 address (no `@`, `/` or
 * space: nothing a URL parser would read as user info or a path) or an IPv6 address in brackets.
 */
const HOST = /^(\[[0-9a-f:.]+\]|[^\s:@/?#[\]\\]+)(?::\d{0,5})?$/i;

/**
 * Why the rule refuses a request's `Host` (undefined: it does not). Any port is taken: the name is what a
 * rebinding page cannot choose, while the port is the service's own or that of a proxy or a tunnel on the
 * same machine that keeps the name (`ssh -L`, a container's published port). A request without `Host`
 * (HTTP/1.0) is refused: it names nothing the rule could check.
 */
export function hostRefusal(
  rule: HostRule | undefined,
  host: string | undefined,
): string | undefined {
  if (rule === undefined) return undefined;
  const name = host === undefined ? undefined : HOST.exec(host)?.[1]?.toLowerCase();
  if (name !== undefined && rule.names.has(name)) return undefined;
  return `This service answers the Host names ${rule.listed} only (it is bound to a loopback address; ALLOWED_HOSTS adds names)`;
}

/**
 * The rule for every request that Express serves: refused with 403 `forbidden` in the layout's shape, and a
 * log line naming the `Host` (so an operator behind a new proxy name sees why). `fail` answers (app.ts passes
 * `sendError`). The fast route serves no request this refuses: it hands them to Express (FastRoutes.find).
 */
export function checkHost(
  rule: HostRule | undefined,
  logger: JsonLogger,
  fail: (error: unknown, request: Request, response: Response) => void,
) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const refusal = hostRefusal(rule, request.headers.host);
    if (refusal === undefined) return next();
    logger.emit('warn', 'host refused', {
      // The id requestLogging gave the request (its own line follows with the 403).
      requestId: response.getHeader('X-Request-Id'),
      method: request.method,
      // Bounded: the header is the client's.
      host: request.headers.host?.slice(0, 200) ?? null,
    });
    fail(new ForbiddenError(refusal), request, response);
  };
}
