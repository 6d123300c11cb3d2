import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthenticationRequiredError, InvalidTokenError } from '@/core/errors';
import { sendError } from '@/http/errors/http-error.filter';
import { JsonLogger } from '@/runtime/json-logger';
import { BROWSER_SIGN_IN, returnPath } from '@/sign-in/browser-session';

/**
 * A browser's navigation to a protected dashboard's page, with no session or a session that ended, goes to
 * the browser sign-in page and comes back (303). Anything else (a client's request, an image's, a
 * script's) gets the layout's 401 as ever, through the one error mapping. A navigation is what the browser
 * says it is (`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document`), which other clients do not send.
 */
@Catch(AuthenticationRequiredError, InvalidTokenError)
export class SignInRedirectFilter implements ExceptionFilter {
  constructor(@Inject(JsonLogger) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<IncomingMessage & { originalUrl?: string }>();
    const response = host.switchToHttp().getResponse<ServerResponse>();
    const back = isNavigation(request) ? returnPath(request.originalUrl ?? request.url) : undefined;
    if (back === undefined || request.headers.authorization !== undefined) {
      sendError(this.logger, error, request, response);
      return;
    }
    response.statusCode = 303;
    response.setHeader(
      'Location',
      `${BROWSER_SIGN_IN}?${new URLSearchParams({ return_to: back }).toString()}`,
    );
    response.setHeader('Cache-Control', 'no-store');
    response.end();
  }
}

function isNavigation(request: IncomingMessage): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    request.headers['sec-fetch-mode'] === 'navigate' &&
    request.headers['sec-fetch-dest'] === 'document'
  );
}
