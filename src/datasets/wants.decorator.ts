import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import type { ReplyWants } from '@/datasets/datasets.service';
import { ResultFormat, negotiateFormat } from '@/datasets/results/stream-formats';

/**
 * A layout's reading of what a results request wants, given the format `Accept` asks (both layouts
 * negotiate it alike; undefined when it names none served here): `resultWants` (datasets.mapper.ts) or `legacyResultWants` (legacy/datasets.ts).
 */
export type WantsReading = (format: ResultFormat | undefined, ifNoneMatch?: string) => ReplyWants;

/**
 * What the reply should be, as the layout reads `Accept` and, on a GET, `If-None-Match` (a POST is not
 * conditional). One parameter rather than two `@Headers()`: Nest resolves each parameter of a handler
 * through promises of its own, and the results GET is the most frequent request.
 */
export const Wants = createParamDecorator(
  (reading: WantsReading, context: ExecutionContext): ReplyWants => {
    const { headers, method } = context.switchToHttp().getRequest<Request>();
    return reading(
      negotiateFormat(headers.accept),
      method === 'GET' ? headers['if-none-match'] : undefined,
    );
  },
);
