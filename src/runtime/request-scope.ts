import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What services may know of the request they serve (the audit log records it), without seeing HTTP: the
 * HTTP edge opens a scope for each request (`http/request/request-logging.ts`); the build worker and the CLI
 * run outside one.
 */
export interface RequestContext {
  requestId: string;
  address: string;
}

const store = new AsyncLocalStorage<RequestContext>();

/** The current request's id and client address; undefined outside a request (the build worker, the CLI). */
export function currentRequest(): RequestContext | undefined {
  return store.getStore();
}

/** Runs `work` as the request `context`: {@link currentRequest} answers it in all `work` awaits. */
export function inRequestScope<T>(context: RequestContext, work: () => T): T {
  return store.run(context, work);
}
