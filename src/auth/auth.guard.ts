import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { ACCESS, Access, setCaller } from '@/common/access.decorators';
import { ANONYMOUS, Caller } from '@/core/caller';
import { basicClientCredentials, isBasicAuthorization } from '@/auth/client-credentials';
import { SsoService } from '@/auth/sso/sso.service';
import { TokensService } from '@/auth/tokens.service';
import { AuthenticationRequiredError, ForbiddenError, InvalidTokenError } from '@/core/errors';

/**
 * Closed by default: every route needs a signed-in caller unless marked. A token that is present is always
 * checked, on public routes too; an empty header or a bare "Bearer" counts as no token.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly sso: SsoService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const access =
      this.reflector.getAllAndOverride<Access | undefined>(ACCESS, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'signed-in';
    if (access === 'none') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();

    const caller = await this.identify(request, access);
    setCaller(request, caller);
    response.setHeader('Applied-Username', caller.username ?? '');

    if (access === 'optional' || access === 'login') return true;
    if (caller.username === null) throw new AuthenticationRequiredError();
    if (access === 'admin' && !caller.isAdmin) {
      throw new ForbiddenError('This endpoint is for administrators');
    }
    return true;
  }

  /**
   * A bearer token wins; without one, identity headers from a trusted proxy count. Drey's own tokens are
   * HS256; any other algorithm is an identity provider's token (when OIDC is configured).
   */
  private async identify(request: Request, access: Access): Promise<Caller> {
    const header = request.headers.authorization;
    if (access === 'login' && isBasicAuthorization(header)) {
      // Accepted and not checked (decisions.md): only a malformed header is refused.
      basicClientCredentials(header as string);
      return ANONYMOUS;
    }
    const token = bearerToken(header);
    if (token === undefined) return (await this.sso.fromHeaders(request)) ?? ANONYMOUS;
    if (jwtAlgorithm(token) === 'HS256' || !this.sso.oidcEnabled) {
      return this.tokens.authenticate(token);
    }
    return this.sso.fromIdpToken(token);
  }
}

function jwtAlgorithm(token: string): string | undefined {
  try {
    const encoded = token.split('.', 1)[0];
    const header = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as {
      alg?: unknown;
    };
    return typeof header.alg === 'string' ? header.alg : undefined;
  } catch {
    return undefined;
  }
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const value = header?.trim() ?? '';
  if (value === '' || /^bearer$/i.test(value)) return undefined;
  const match = /^bearer\s+(\S+)$/i.exec(value);
  if (!match) throw new InvalidTokenError('The Authorization header must be "Bearer <token>"');
  return match[1];
}
