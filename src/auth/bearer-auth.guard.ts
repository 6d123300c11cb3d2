import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { ACCESS, Access, setAdmin, setCaller } from '@/http/access/access.decorators';
import { ANONYMOUS, Caller, asAdministrator } from '@/core/caller';
import { bearerToken, jwtAlgorithm } from '@/auth/bearer-token';
import { basicClientCredentials, isBasicAuthorization } from '@/auth/client-credentials';
import { SsoService } from '@/auth/sso/sso.service';
import { refuseEmbedded } from '@/core/embed';
import { EmbedTokensService } from '@/auth/embed-tokens.service';
import type { TokenRefusal } from '@/auth/jwt.strategy';
import { AuthenticationRequiredError, ForbiddenError, InvalidTokenError } from '@/core/errors';

/** What JwtStrategy reports when a request carries no token (passport-jwt's own "No auth token"). */
const NO_TOKEN: TokenRefusal = 'no_token';

/**
 * Closed by default: every route needs a signed-in caller unless marked (`ACCESS`). Drey's tokens go
 * through passport-jwt (JwtStrategy); a token that is present is always checked, on public routes too,
 * and anything wrong with it is a 401 `invalid_token`. Without a token, identity headers from a trusted
 * proxy count, else the caller is anonymous. An identity provider's token (any algorithm but HS256, when
 * OIDC is configured) goes to SsoService.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('jwt') {
  constructor(
    private readonly reflector: Reflector,
    private readonly sso: SsoService,
    private readonly embeds: EmbedTokensService,
  ) {
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
    const token = bearerToken(header);
    const embedded = token ?? embedTokenOf(request);
    if (embedded !== undefined && this.embeds.isEmbedToken(embedded)) {
      return this.embeds.callerOf(embedded);
    }
    if (this.sso.oidcEnabled && token !== undefined && jwtAlgorithm(token) !== 'HS256') {
      return this.sso.fromIdpToken(token);
    }
    // passport-jwt; its extractor (bearerTokenOf) throws 401 for a header that is neither empty nor
    // "Bearer <token>", and handleRequest below decides the rest.
    await super.canActivate(context);
    const caller = request.user as Caller | undefined;
    return caller ?? (await this.sso.fromHeaders(request)) ?? ANONYMOUS;
  }

  /**
   * @nestjs/passport's default turns every failure into a bare 401 and drops `info`. Here: no token
   * (an absent or empty header, a bare "Bearer") is an anonymous caller (undefined), any refused token is
   * 401 `invalid_token`, and an error (the database is down) goes on to the error filter as it is.
   */
  override handleRequest<TUser = Caller | undefined>(
    error: Error | null,
    caller: unknown,
    info: unknown,
  ): TUser {
    if (error) throw error;
    if (caller) return caller as TUser;
    if (info === NO_TOKEN) return undefined as TUser;
    throw new InvalidTokenError();
  }
}

/**
 * `x_embed_token` of a GET's query: how a browser's iframe or image, which cannot send headers, carries an
 * embedding token. Only an embedding's: any other token in a URL would end up in logs and histories.
 */
function embedTokenOf(request: Request): string | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  const value = (request.query as Record<string, unknown> | undefined)?.x_embed_token;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
