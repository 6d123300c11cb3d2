import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { callerOf } from '@/http/access/access.decorators';
import type { IncomingMessage } from 'node:http';
import { clientAddress } from '@/http/request/client-address';
import type { JsonLogger } from '@/runtime/json-logger';
import { inRequestScope } from '@/runtime/request-scope';

const REQUEST_ID = Symbol('requestId');
type WithId = IncomingMessage & { [REQUEST_ID]?: string };

// A caller-supplied id is kept only when it is short and plain, so it cannot forge log lines.
const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestIdOf(request: IncomingMessage): string | undefined {
  return (request as WithId)[REQUEST_ID];
}

/**
 * Starts serving a request: its id (kept from `X-Request-Id` when safe), remembered on the request and
 * returned as `X-Request-Id`, and the context services see while `work` runs.
 */
export function serveRequest<T>(
  request: IncomingMessage,
  response: { setHeader(name: string, value: string): unknown },
  work: (requestId: string) => T,
): T {
  const id = newRequestId(request.headers['x-request-id']);
  (request as WithId)[REQUEST_ID] = id;
  response.setHeader('X-Request-Id', id);
  return inRequestScope({ requestId: id, address: clientAddress(request) }, () => work(id));
}

/** Told of every finished request, with the route template (`/api/.../:dataset/results`) when one matched. */
export type RequestObserver = (
  method: string,
  route: string,
  status: number,
  seconds: number,
) => void;

/** The request's id: the caller's `X-Request-Id` when short and plain, else a new one. */
function newRequestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * The request's log line and metrics, once its response is finished: method, path (without the query),
 * status, duration. `route` is the matched route's template, or undefined when none matched.
 */
export function requestFinished(
  logger: JsonLogger,
  observe: RequestObserver | undefined,
  request: { method?: string; url?: string; originalUrl?: string },
  requestId: string,
  route: string | undefined,
  status: number,
  started: bigint,
): void {
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  const method = request.method ?? 'GET';
  observe?.(method, route ?? 'unmatched', status, durationMs / 1000);
  logger.emitSoon('info', 'request', {
    requestId,
    method,
    path: (request.originalUrl ?? request.url ?? '').split('?', 1)[0],
    status,
    durationMs: Math.round(durationMs * 100) / 100,
    // Who asked, when anyone signed in (an embedding's holder goes by `embed:<sub>`, with its token's id).
    ...usernameOf(request),
  });
}

function usernameOf(request: object): { username?: string; embedTokenId?: string } {
  const caller = callerOf(request as Request);
  if (caller.username === null) return {};
  const tokenId = caller.embed?.tokenId;
  return tokenId
    ? { username: caller.username, embedTokenId: tokenId }
    : { username: caller.username };
}

/**
 * Gives each request an id (kept from `X-Request-Id` when safe), returns it as `X-Request-Id`, and writes
 * one log line when the response is finished (see {@link requestFinished}).
 */
export function requestLogging(logger: JsonLogger, observe?: RequestObserver) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    serveRequest(request, response, (id) => {
      response.once('finish', () => {
        const route = (request.route as { path?: string } | undefined)?.path;
        requestFinished(
          logger,
          observe,
          request,
          id,
          route ? `${request.baseUrl}${route}` : undefined,
          response.statusCode,
          started,
        );
      });
      next();
    });
  };
}
