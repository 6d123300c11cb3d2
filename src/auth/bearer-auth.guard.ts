import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { ACCESS, Access, setAdmin, setCaller } from '@/http/access/access.decorators';
import { ANONYMOUS, Caller, asAdministrator } from '@/core/caller';
import { CALLER_STRATEGY } from '@/auth/caller.strategy';
import { basicClientCredentials, isBasicAuthorization } from '@/auth/client-credentials';
import { refuseEmbedded } from '@/core/embedding/embed-request';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';

/**
 * Closed by default: every route needs a signed-in caller unless marked (`ACCESS`). The caller comes from
 * passport (CallerStrategy), which hands the request's credential to CallerResolver, the one place any door
 * turns a credential into a caller; a credential that is present is always checked, on public routes too,
 * and a refused one is a 401 `invalid_token`. This guard only applies the route's access level.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard(CALLER_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const access =
      this.reflector.getAllAndOverride<Access | undefined>(ACCESS, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'signed-in';
    if (access === 'none') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();

    const caller = await this.identify(context, request, access);
    setCaller(request, caller);
    http.getResponse<Response>().setHeader('Applied-Username', caller.username ?? '');

    if (access === 'optional' || access === 'login') return true;
    if (caller.username === null) throw new AuthenticationRequiredError();
    // An embedding opens its item, through the routes open to everyone; nothing that needs a user.
    refuseEmbedded(caller, 'what needs a signed-in user');
    if (access === 'admin') {
      // The one place an administrator is admitted: services for administrators take what this decides.
      const admin = asAdministrator(caller);
      if (admin === null) throw new ForbiddenError('This endpoint is for administrators');
      setAdmin(request, admin);
    }
    return true;
  }

  private async identify(
    context: ExecutionContext,
    request: Request,
    access: Access,
  ): Promise<Caller> {
    const header = request.headers.authorization;
    if (access === 'login' && isBasicAuthorization(header)) {
      // OAuth client credentials: accepted and not checked (decisions.md); only a malformed header is refused.
      basicClientCredentials(header as string);
      return ANONYMOUS;
    }
    await super.canActivate(context);
    return request.user as Caller;
  }

  /**
   * @nestjs/passport's default turns every failure into a bare 401 and drops the error. Here the resolver's
   * error (a refused credential's 401 `invalid_token` saying why, a database that is down) goes on to the
   * error filter as it is.
   */
  override handleRequest<TUser = Caller>(error: Error | null, caller: unknown): TUser {
    if (error) throw error;
    return caller as TUser;
  }
}
