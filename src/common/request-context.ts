import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { clientAddress } from '@/common/client-address';
import type { JsonLogger } from '@/common/json-logger';

const REQUEST_ID = Symbol('requestId');
type WithId = Request & { [REQUEST_ID]?: string };

// A caller-supplied id is kept only when it is short and plain, so it cannot forge log lines.
const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** What services may know of the request they serve (the audit log records it), without seeing HTTP. */
export interface RequestContext {
  requestId: string;
  address: string;
}

const store = new AsyncLocalStorage<RequestContext>();

/** The current request's id and client address; undefined outside a request (the build worker, the CLI). */
export function currentRequest(): RequestContext | undefined {
  return store.getStore();
}

export function requestIdOf(request: Request): string | undefined {
  return (request as WithId)[REQUEST_ID];
}

/**
 * Gives each request an id (kept from `X-Request-Id` when safe), returns it as `X-Request-Id`, and writes
 * one log line when the response is finished: method, path (without the query), status, duration.
 */
/** Told of every finished request, with the route template (`/api/.../:dataset/results`) when one matched. */
export type RequestObserver = (
  method: string,
  route: string,
  status: number,
  seconds: number,
) => void;

export function requestLogging(logger: JsonLogger, observe?: RequestObserver) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const incoming = request.headers['x-request-id'];
    const id = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
    (request as WithId)[REQUEST_ID] = id;
    response.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const route = (request.route as { path?: string } | undefined)?.path;
      observe?.(
        request.method,
        route ? `${request.baseUrl}${route}` : 'unmatched',
        response.statusCode,
        durationMs / 1000,
      );
      logger.emit('info', 'request', {
        requestId: id,
        method: request.method,
        path: request.originalUrl.split('?', 1)[0],
        status: response.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
      });
    });
    store.run({ requestId: id, address: clientAddress(request) }, next);
  };
}
