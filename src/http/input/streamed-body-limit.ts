import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { BODY_LIMIT_BYTES, PayloadTooLargeError } from '@/http/input/input-limits';
import { closeLingering } from '@/http/input/lingering-close';

/**
 * A body parser of body-parser (express.json, express.urlencoded), with a body sent without
 * `Content-Length` (chunked) refused as soon as it passes {@link BODY_LIMIT_BYTES}. body-parser stops buffering
 * at its limit but reads the rest of the body to its end before it answers (its `dump`): a body that never
 * ends is never answered. Here the 413 goes out at the limit, the connection closes lingeringly
 * (lingering-close.ts), and the parser's own error, once the rest is read or the connection closed, is
 * dropped. A declared length over the limit never gets here (requestLimits refuses it from the headers); one
 * within it cannot be exceeded.
 */
export function limitStreamedBody(
  parser: RequestHandler,
  fail: (error: unknown, request: Request, response: Response) => void,
): RequestHandler {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (request.headers['transfer-encoding'] === undefined) {
      void parser(request, response, next);
      return;
    }
    let refused = false;
    let passed = false;
    let received = 0;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= BODY_LIMIT_BYTES) return;
      request.off('data', count);
      refused = true;
      closeLingering(request, response);
      fail(new PayloadTooLargeError(), request, response);
    };
    void parser(request, response, (error?: unknown) => {
      passed = true;
      request.off('data', count);
      if (!refused) next(error);
    });
    // Counted beside the parser only when it reads the body (it listens for data at once); a body of a type
    // it does not parse is left unread for the route.
    if (!passed && request.listenerCount('data') > 0) request.on('data', count);
  };
}
