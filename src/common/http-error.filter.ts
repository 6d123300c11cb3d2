import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerOf } from '@/common/access.decorators';
import { describeError, renderCurrent, renderLegacy } from '@/common/error-mapping';
import { ModelFailedError } from '@/core/errors';
import { isLegacyPath } from '@/common/routes';
import { JsonLogger } from '@/common/json-logger';
import { requestIdOf } from '@/common/request-context';
import { setSecurityHeaders } from '@/common/security-headers';

/**
 * The one place where errors become responses. Each layout has its own body shape; the layout is the
 * path's, so an unknown legacy path also answers in the legacy shape.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(@Inject(JsonLogger) private readonly logger: JsonLogger) {}

  /**
   * Returns null, not undefined: Nest's context machinery outside its router (which the fast routes use)
   * reads undefined as "no filter handled it", then logs the error and throws it again.
   */
  catch(error: unknown, host: ArgumentsHost): null {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    sendError(this.logger, error, request, response);
    return null;
  }
}

/**
 * Answers an error in the shape of the request's layout. Works on Node's own request and response, so the
 * error handler of Express' body parsers (app.ts) answers exactly as routes do.
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
  if (reply.status === 401) response.setHeader('WWW-Authenticate', 'Bearer');
  if (reply.retryAfterSeconds !== undefined) {
    response.setHeader('Retry-After', String(reply.retryAfterSeconds));
  }
  const body = JSON.stringify(isLegacyPath(path) ? renderLegacy(reply) : renderCurrent(reply));
  response.statusCode = reply.status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(body);
}
