import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import type { ReplyWants } from '@/datasets/dataset-replies';
import { clientAddress } from '@/http/request/client-address';
import { ResultFormat, negotiateFormat } from '@/datasets/results/stream-formats';

/**
 * A layout's reading of what a results request wants, given the format `Accept` asks (both layouts
 * negotiate it alike; undefined when it names none served here), `If-None-Match` and the client's address:
 * `resultWants` (datasets.mapper.ts) or `legacyResultWants` (legacy/datasets.ts).
 */
export type WantsReading = (
  format: ResultFormat | undefined,
  ifNoneMatch?: string,
  address?: string,
) => ReplyWants;

/**
 * What the reply should be, as the layout reads `Accept` and, on a GET, `If-None-Match` (a POST is not
 * conditional), with the client's address (whose slots an anonymous caller's uncached work takes). One
 * parameter rather than several `@Headers()`: Nest resolves each parameter of a handler through promises
 * of its own, and the results GET is the most frequent request.
 */
export const Wants = createParamDecorator(
  (reading: WantsReading, context: ExecutionContext): ReplyWants => {
    const request = context.switchToHttp().getRequest<Request>();
    const { headers, method } = request;
    return reading(
      negotiateFormat(headers.accept),
      method === 'GET' ? headers['if-none-match'] : undefined,
      clientAddress(request),
    );
  },
);
