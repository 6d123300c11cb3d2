import { All, Controller, Get, NotFoundException, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { NoAuth } from '@/http/access/access.decorators';
import { BodyTypes } from '@/http/input/body-types';
import { AuthorizationServer } from '@/oauth/authorization-server';
import { OAUTH_LIBRARY_PATHS } from '@/oauth/oauth-paths';

/**
 * The authorization server's endpoints (authorization, token, registration, revocation, keys) and its
 * metadata, at RFC 8414's address and OpenID's: served by the library (AuthorizationServer) behind the
 * application's pipeline (request id, log line, metrics, security headers, the Host rule). Not found when
 * OAUTH_SERVER is off. The sign-in and consent pages are Drey's (SignInController).
 */
@ApiExcludeController()
@NoAuth()
@Controller()
export class OAuthController {
  constructor(private readonly server: AuthorizationServer) {}

  @Get(['.well-known/oauth-authorization-server', '.well-known/openid-configuration'])
  async metadata(@Req() request: Request, @Res() response: Response): Promise<void> {
    // The library answers its metadata at OpenID's address; RFC 8414's names the same document.
    request.url = '/.well-known/openid-configuration';
    await this.serve(request, response);
  }

  // The library takes forms (token, revocation, authorization by POST) and JSON (registration), and
  // answers any other type itself, in OAuth's shape.
  @All(OAUTH_LIBRARY_PATHS.map((path) => path.slice(1)))
  @BodyTypes('application/x-www-form-urlencoded', 'application/json')
  async endpoint(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.serve(request, response);
  }

  private async serve(request: Request, response: Response): Promise<void> {
    if (!this.server.enabled) throw new NotFoundException();
    const provider = await this.server.provider(request);
    await provider.callback()(request, response);
  }
}
