import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import type { ReplyWants } from '@/datasets/datasets.service';

/** A layout's reading of what a results request wants: its mapper's `resultWants` or `legacyResultWants`. */
export type WantsReading = (accept: string | undefined, ifNoneMatch?: string) => ReplyWants;

/**
 * What the reply should be, as the layout's mapper reads `Accept` and, on a GET, `If-None-Match` (a POST is
 * not conditional). One parameter rather than two `@Headers()`: Nest resolves each parameter of a handler
 * through promises of its own, and the results GET is the most frequent request.
 */
export const Wants = createParamDecorator(
  (reading: WantsReading, context: ExecutionContext): ReplyWants => {
    const { headers, method } = context.switchToHttp().getRequest<Request>();
    return reading(headers.accept, method === 'GET' ? headers['if-none-match'] : undefined);
  },
);
