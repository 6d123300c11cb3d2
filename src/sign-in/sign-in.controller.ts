import { Body, Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { NoAuth } from '@/http/access/access.decorators';
import { sendPage } from '@/sign-in/page-reply';
import { BodyTypes } from '@/http/input/body-types';
import { SIGN_IN_PREFIX } from '@/oauth/oauth-paths';
import { SignInService } from '@/sign-in/sign-in.service';
import { FEDERATION_CALLBACK } from '@/sign-in/federation';

const PAGE = `${SIGN_IN_PREFIX.slice(1)}/:uid`;

/**
 * Drey's pages of a sign-in by its authorization server (docs/mcp.md): the sign-in form, then the consent
 * form; each step's cookie is the library's (SameSite=Lax, so another site's form cannot post a step).
 */
@ApiExcludeController()
@NoAuth()
@BodyTypes('application/x-www-form-urlencoded')
@Controller()
export class SignInController {
  constructor(private readonly signIn: SignInService) {}

  /** Back from the identity provider: before `:uid`, which the word `callback` would otherwise match. */
  @Get(FEDERATION_CALLBACK.slice(1))
  async federationCallback(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPage(response, await this.signIn.federationCallback(request, response));
  }

  @Get(`${PAGE}/federated`)
  async federate(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPage(response, await this.signIn.federate(request, response));
  }

  @Get(`${PAGE}/federated/done`)
  async federationDone(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPage(response, await this.signIn.federationDone(request, response));
  }

  @Get(PAGE)
  async show(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPage(response, await this.signIn.show(request, response));
  }

  @Post(`${PAGE}/login`)
  async login(
    @Req() request: Request,
    @Res() response: Response,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    sendPage(response, await this.signIn.login(request, response, form ?? {}));
  }

  @Post(`${PAGE}/consent`)
  async consent(
    @Req() request: Request,
    @Res() response: Response,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    sendPage(response, await this.signIn.consent(request, response, form ?? {}));
  }
}
