import { ArgumentsHost, Catch, ExceptionFilter, Inject, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerOf } from '@/http/access/access.decorators';
import { describeError, renderCurrent } from '@/http/errors/error-mapping';
import { bearerChallengeOf } from '@/http/errors/bearer-challenge';
import { DomainError, ModelFailedError } from '@/core/errors';
import { renderLegacy } from '@/legacy/errors';
import { isLegacyPath } from '@/legacy/routes';
import { JsonLogger } from '@/runtime/json-logger';
import { requestIdOf } from '@/http/request/request-logging';
import { setSecurityHeaders } from '@/http/security-headers';
import { HttpReply, sendReply } from '@/http/reply/http-reply';

/**
 * The one place where errors become responses. Each layout has its own body shape; the layout is the
 * path's, so an unknown legacy path also answers in the legacy shape.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(@Inject(JsonLogger) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    sendError(this.logger, methodNotAllowed(error, request, response) ?? error, request, response);
  }
}

/** What this filter reads of Express 5's router (the `router` package) to list a path's methods. */
interface RouterLayer {
  route?: { methods: Record<string, boolean | undefined> };
  match(path: string): unknown;
}

/**
 * Nest answers a path that no route matched with a NotFoundException. When routes of other methods match
 * the path, the answer is 405 with `Allow` (RFC 9110 §15.5.6), so a client or a fuzzer can tell a wrong
 * method from a wrong path.
 */
function methodNotAllowed(error: unknown, request: Request, response: Response): unknown {
  // A request Express routed has its route; one the fast route serves has neither route nor app.
  if (!(error instanceof NotFoundException) || request.route !== undefined) return undefined;
  if (!(request as Partial<Request>).app) return undefined;
  const stack =
    (request.app as unknown as { router?: { stack: RouterLayer[] } }).router?.stack ?? [];
  const path = request.path;
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
    let matched: unknown;
    try {
      matched = layer.match(path);
    } catch {
      continue; // a path that does not decode matches no route
    }
    if (!matched) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.size === 0) return undefined;
  if (methods.has('GET')) methods.add('HEAD');
  const allowed = [...methods].sort().join(', ');
  response.setHeader('Allow', allowed);
  return new DomainError(
    'method_not_allowed',
    `This path does not take ${request.method}; it takes ${allowed}`,
  );
}

/**
 * Answers an error in the shape of the request's layout. Works on Node's own request and response, so the
 * error handler of Express' body parsers (app.ts) and the fast route answer exactly as routes do.
 */
export function sendError(
  logger: JsonLogger,
  error: unknown,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  // Express keeps the whole path in originalUrl; `url` loses the mount path inside a router.
  const url = (request as { originalUrl?: string }).originalUrl ?? request.url ?? '';
  const path = url.split('?', 1)[0];
  const caller = callerOf(request as Request);
  const reply = describeError(error, caller.isAdmin);
  if (error instanceof ModelFailedError) {
    logger.emit('error', 'model failed', {
      requestId: requestIdOf(request),
      method: request.method,
      path,
      model: error.model,
      error: error.engineMessage,
    });
  }
  if (reply.unexpected) {
    logger.emit('error', 'unexpected error', {
      requestId: requestIdOf(request),
      method: request.method,
      path,
      error: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    });
  }
  if (response.headersSent) {
    response.destroy();
    return;
  }
  // An error is never the page its route serves: whatever policy the route had set, the API's.
  setSecurityHeaders(response);
  if (reply.status === 401) response.setHeader('WWW-Authenticate', bearerChallengeOf(request));
  if (reply.retryAfterSeconds !== undefined) {
    response.setHeader('Retry-After', String(reply.retryAfterSeconds));
  }
  const body = JSON.stringify(
    isLegacyPath(path) ? renderLegacy(reply, error) : renderCurrent(reply),
  );
  // The writer of every reply, on Nest's path and the fast route's alike; a body in hand is sent at once.
  void sendReply(
    new HttpReply(reply.status, { 'Content-Type': 'application/json; charset=utf-8' }, body),
    response,
  );
}
