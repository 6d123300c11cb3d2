import { Body, Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { NoAuth } from '@/http/access/access.decorators';
import { sendPage } from '@/sign-in/page-reply';
import { BodyTypes } from '@/http/input/body-types';
import { BROWSER_SIGN_IN, BROWSER_SIGN_OUT, BrowserSessions } from '@/sign-in/browser-session';
import { signOutPage } from '@/sign-in/sign-in-pages';

/** A person's sign-in and sign-out in a browser, for protected HTML dashboards (BrowserSessions). */
@ApiExcludeController()
@NoAuth()
@BodyTypes('application/x-www-form-urlencoded')
@Controller()
export class BrowserSessionController {
  constructor(private readonly sessions: BrowserSessions) {}

  @Get(BROWSER_SIGN_IN.slice(1))
  show(@Req() request: Request, @Res() response: Response): void {
    sendPage(response, this.sessions.page(request));
  }

  @Post(BROWSER_SIGN_IN.slice(1))
  async signIn(
    @Req() request: Request,
    @Res() response: Response,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    sendPage(response, await this.sessions.signIn(request, response, form ?? {}));
  }

  @Get(BROWSER_SIGN_OUT.slice(1))
  signOutForm(@Res() response: Response): void {
    sendPage(response, { page: signOutPage(), status: 200 });
  }

  @Post(BROWSER_SIGN_OUT.slice(1))
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
    sendPage(response, await this.sessions.signOut(request, response));
  }
}
