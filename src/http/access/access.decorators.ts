import { ExecutionContext, SetMetadata, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { ANONYMOUS, Caller } from '@/core/caller';

/** How a route treats tokens; routes are closed (`signed-in`) unless marked. */
export type Access = 'none' | 'optional' | 'login' | 'signed-in' | 'admin';
export const ACCESS = 'drey:access';

/** The route needs no token; a token that is present must still be valid. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, 'optional');
/**
 * The login form: public, and a Basic `Authorization` header carries the OAuth client's credentials
 * (RFC 6749 2.3.1), never a token; a bearer token that is present must still be valid.
 */
export const LoginRoute = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, 'login');
/** Scope decides (public datasets): same token handling as {@link Public}. */
export const OptionalAuth = Public;
/** Only administrators. */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, 'admin');
/** Outside the project API (health, metrics): tokens are not looked at. */
export const NoAuth = (): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, 'none');

const CALLER = Symbol('caller');
type WithCaller = Request & { [CALLER]?: Caller };

export function setCaller(request: Request, caller: Caller): void {
  (request as WithCaller)[CALLER] = caller;
}

export function callerOf(request: Request): Caller {
  return (request as WithCaller)[CALLER] ?? ANONYMOUS;
}

/** The caller of this request, as the auth guard found it. */
export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext) =>
  callerOf(context.switchToHttp().getRequest<Request>()),
);
