import { ExecutionContext, SetMetadata, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { ANONYMOUS, AdminCaller, Caller } from '@/core/caller';

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
const ADMIN = Symbol('admin');
type WithCaller = Request & { [CALLER]?: Caller; [ADMIN]?: AdminCaller };

export function setCaller(request: Request, caller: Caller): void {
  (request as WithCaller)[CALLER] = caller;
}

export function callerOf(request: Request): Caller {
  return (request as WithCaller)[CALLER] ?? ANONYMOUS;
}

/** The caller of an `@AdminOnly()` route, once the bearer guard has admitted it as an administrator. */
export function setAdmin(request: Request, admin: AdminCaller): void {
  (request as WithCaller)[ADMIN] = admin;
}

/** The caller of this request, as the auth guard found it. */
export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext) =>
  callerOf(context.switchToHttp().getRequest<Request>()),
);

/**
 * The administrator calling an `@AdminOnly()` route, as the bearer guard admitted it: what services that
 * are for administrators only take. On a route without `@AdminOnly()` there is none, and the handler fails
 * (a 500 naming the mistake) rather than let a service run for a caller nobody checked; the architecture
 * spec refuses such a handler before it ships.
 */
export const CurrentAdmin = createParamDecorator(
  (_: unknown, context: ExecutionContext): AdminCaller => {
    const admin = (context.switchToHttp().getRequest<Request>() as WithCaller)[ADMIN];
    if (admin === undefined) {
      throw new Error(
        `@CurrentAdmin() on ${context.getClass().name}.${context.getHandler().name}, a route without @AdminOnly()`,
      );
    }
    return admin;
  },
);
