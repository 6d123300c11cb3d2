import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { serialize as serializeCookie } from 'cookie';
import { AuthService } from '@/auth/auth.service';
import { SESSION_COOKIE } from '@/auth/credentials';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { DomainError, STATUS_OF } from '@/core/errors';
import { ServedProject } from '@/core/project/served-project';
import { clientAddress } from '@/http/request/client-address';
import { isDashboardPagePath } from '@/http/routes';
import { parse as parseCookies } from 'cookie';
import { Page, browserSignInPage, signedInPage, signedOutPage } from '@/sign-in/sign-in-pages';

/** The browser's sign-in page and its sign-out: plain paths, outside both layouts. */
export const BROWSER_SIGN_IN = '/sign-in';
export const BROWSER_SIGN_OUT = '/sign-out';

/** What a browser step answers: a page, or nothing when it redirected. */
export type BrowserStep = { page: Page; status: number } | null;

/**
 * Where a browser may be sent back to after signing in: a dashboard's page of this service (a path, with
 * its selections), never another site (no open redirect) nor anything else of this one.
 */
export function returnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 4096 || !value.startsWith('/')) return undefined;
  if (value.startsWith('//') || value.includes('\\')) return undefined;
  let url: URL;
  try {
    url = new URL(value, 'http://drey.invalid');
  } catch {
    return undefined;
  }
  if (url.origin !== 'http://drey.invalid' || !isDashboardPagePath(url.pathname)) return undefined;
  return `${url.pathname}${url.search}`;
}

/**
 * A person's session in a browser, to open protected HTML dashboards (docs/dashboards.md): the sign-in page
 * checks their password as the login endpoint does (its lockout and audit, AuthService.login) and keeps the
 * login token it makes in an HttpOnly, SameSite=Lax cookie (Secure behind HTTPS), which lives as the token
 * does. The cookie counts on safe GETs of dashboards' pages only (auth/credentials.ts). Signing out revokes
 * the token, so the cookie is worth nothing from then on, on every replica.
 */
@Injectable()
export class BrowserSessions {
  constructor(
    private readonly auth: AuthService,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  page(request: Request): BrowserStep {
    return {
      page: browserSignInPage({
        project: this.served.current.label,
        returnTo: returnPath(request.query.return_to),
      }),
      status: 200,
    };
  }

  async signIn(
    request: Request,
    response: Response,
    form: Record<string, unknown>,
  ): Promise<BrowserStep> {
    const username = typeof form.username === 'string' ? form.username.slice(0, 255) : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const back = returnPath(form.return_to);
    const again = (error: string, status: number): BrowserStep => ({
      page: browserSignInPage({
        project: this.served.current.label,
        returnTo: back,
        error,
        username,
      }),
      status,
    });
    const address = clientAddress(request);
    let user;
    try {
      user = await this.auth.checkCredentials(username, password, address);
    } catch (error) {
      if (error instanceof DomainError) return again(error.message, STATUS_OF[error.code]);
      throw error;
    }
    if (user === undefined) return again('Wrong user name or password.', 401);
    const token = await this.auth.login(user, address);
    const seconds = Math.max(
      1,
      Math.floor(((token.expiresAt?.getTime() ?? Date.now() + 3600_000) - Date.now()) / 1000),
    );
    response.setHeader('Set-Cookie', this.cookie(request, token.accessToken, seconds));
    if (back === undefined) return { page: signedInPage(user.username), status: 200 };
    response.redirect(303, back);
    return null;
  }

  /** Ends the session: its token revoked, the cookie cleared. */
  async signOut(request: Request, response: Response): Promise<BrowserStep> {
    const header = request.headers.cookie;
    const token =
      header === undefined || header.length > 8192
        ? undefined
        : parseCookies(header)[SESSION_COOKIE];
    if (token) await this.auth.endSession(token);
    response.setHeader('Set-Cookie', this.cookie(request, '', 0));
    return { page: signedOutPage(), status: 200 };
  }

  private cookie(request: Request, value: string, seconds: number): string {
    return serializeCookie(SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: 'lax',
      secure:
        request.protocol === 'https' || this.config.oauth.publicUrl?.startsWith('https:') === true,
      path: '/',
      maxAge: seconds,
    });
  }
}
