import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { clientAddress } from '@/http/request/client-address';

/** The client's address (clientAddress): whose slots an anonymous caller's work takes. */
export const ClientAddress = createParamDecorator((_: unknown, context: ExecutionContext) =>
  clientAddress(context.switchToHttp().getRequest<Request>()),
);
