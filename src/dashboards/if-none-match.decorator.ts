import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';

/**
 * `If-None-Match` of a GET (a POST is not conditional), or undefined. A decorator of its own rather than
 * `@Headers('if-none-match')`, which the OpenAPI document would list as a required header of the route;
 * the 304 the header can bring is documented on the route instead.
 */
export const IfNoneMatch = createParamDecorator(
  (_: unknown, context: ExecutionContext): string | undefined => {
    const { headers, method } = context.switchToHttp().getRequest<Request>();
    return method === 'GET' ? headers['if-none-match'] : undefined;
  },
);
