import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { JsonLogger } from '@/common/json-logger';

const REQUEST_ID = Symbol('requestId');
type WithId = Request & { [REQUEST_ID]?: string };

// A caller-supplied id is kept only when it is short and plain, so it cannot forge log lines.
const SAFE_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestIdOf(request: Request): string | undefined {
  return (request as WithId)[REQUEST_ID];
}

/**
 * Gives each request an id (kept from `X-Request-Id` when safe), returns it as `X-Request-Id`, and writes
 * one log line when the response is finished: method, path (without the query), status, duration.
 */
export function requestLogging(logger: JsonLogger) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const incoming = request.headers['x-request-id'];
    const id = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
    (request as WithId)[REQUEST_ID] = id;
    response.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.emit('info', 'request', {
        requestId: id,
        method: request.method,
        path: request.originalUrl.split('?', 1)[0],
        status: response.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
      });
    });
    next();
  };
}
