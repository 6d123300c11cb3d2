import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import {
  ParameterRequest,
  RawQuery,
  SelectionReading,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';

/**
 * The request's parameter selections: from the query string on GET (a repeated name gives several values),
 * from the JSON body on POST (which must be an object), read as `reading` says (strict names and forms by
 * default). So a GET route and its POST twin share one handler body: Nest keeps one route per method (a
 * second `@Get`/`@Post` on a method overwrites the first), so the POST twin is a method of its own, with its
 * own OpenAPI decorators, that calls the GET's handler. Selections differ per dataset, so they are parsed by
 * the parameters domain, not by DTOs; a bad one is a 400 answered by the error filter.
 */
export const Selections = createParamDecorator(
  (reading: SelectionReading | undefined, context: ExecutionContext): ParameterRequest => {
    const request = context.switchToHttp().getRequest<Request>();
    return request.method === 'POST'
      ? parseBodySelections(request.body, reading)
      : parseQuerySelections(request.query as RawQuery, reading);
  },
);
