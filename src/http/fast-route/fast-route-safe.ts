/**
 * Middleware the fast route may skip, each with the reason it may: it does for a fast request what the
 * middleware does (the security headers, the request context and log line, the URL's bounds), or the
 * middleware has nothing to do for a request the fast route serves (a body parser: a request with a body goes
 * to Express). Start-up refuses a fast route that any other middleware applies to.
 */
const SAFE = new WeakMap<object, string>();

/** Declares `middleware` safe for the fast route to skip, for `reason`; returns it as it is. */
export function fastRouteSafe<T extends object>(middleware: T, reason: string): T {
  SAFE.set(middleware, reason);
  return middleware;
}

/** Why the fast route may skip `middleware`; undefined when it was not declared safe. */
export function whySafe(middleware: object): string | undefined {
  return SAFE.get(middleware);
}
