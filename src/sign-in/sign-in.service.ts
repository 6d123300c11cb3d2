import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '@/audit/audit.service';
import { AuthService } from '@/auth/auth.service';
import { DomainError, STATUS_OF } from '@/core/errors';
import { ServedProject } from '@/core/project/served-project';
import { UsersRepository } from '@/database/tables/users.repository';
import { clientAddress } from '@/http/request/client-address';
import { AuthorizationServer } from '@/oauth/authorization-server';
import type { ClientRecord, Interaction, OidcProvider } from '@/oauth/oidc-provider';
import { signInPath } from '@/oauth/oauth-paths';
import { GRANT_SECONDS } from '@/oauth/authorization-server';
import { GrantsService } from '@/oauth/grants.service';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { Federation } from '@/sign-in/federation';
import { randomUUID } from 'node:crypto';
import {
  ClientView,
  Page,
  consentPage,
  problemPage,
  returnTarget,
  signInPage,
} from '@/sign-in/sign-in-pages';

/** What a step of a sign-in answers: a page (with its status), or nothing when the library has redirected. */
export type Step = { page: Page; status: number; retryAfterSeconds?: number } | null;

/**
 * The person's side of an authorization (the library's interactions): Drey's sign-in page, checked as the
 * login endpoint checks passwords (its lockout and audit, AuthService), then its consent page, asked once
 * per client and remembered in the grant until it is revoked.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly server: AuthorizationServer,
    private readonly auth: AuthService,
    private readonly users: UsersRepository,
    private readonly audit: AuditService,
    private readonly served: ServedProject,
    private readonly grants: GrantsService,
    private readonly federation: Federation,
    private readonly records: OAuthRecordsRepository,
  ) {}

  /** The sign-in sent to the identity provider; the browser goes there (303). */
  async federate(request: Request, response: Response): Promise<Step> {
    const found = await this.interaction(request, response);
    if ('page' in found) return found;
    if (!this.federation.enabled || found.details.prompt.name !== 'login') {
      return this.show(request, response);
    }
    let provider: URL;
    try {
      provider = await this.federation.start(request, found.details.uid);
    } catch (error) {
      if (error instanceof DomainError) return problemStep(error);
      throw error;
    }
    response.redirect(303, provider.href);
    return null;
  }

  /**
   * Back from the identity provider (its one fixed callback): the code exchanged and the identity mapped,
   * then the browser sent on to its interaction's address, where its sign-in cookie is read (`done`).
   */
  async federationCallback(request: Request, response: Response): Promise<Step> {
    if (!this.federation.enabled) return { page: problemPage('Not found.'), status: 404 };
    let outcome;
    try {
      outcome = await this.federation.finish(request);
    } catch (error) {
      if (error instanceof DomainError) return problemStep(error);
      throw error;
    }
    const result = randomUUID();
    await this.records.upsert('FederationDone', result, { ...outcome }, 120);
    response.redirect(303, `${signInPath(outcome.uid)}/federated/done?result=${result}`);
    return null;
  }

  /** The interaction finished for the account the provider signed in, or the sign-in page with why not. */
  async federationDone(request: Request, response: Response): Promise<Step> {
    const found = await this.interaction(request, response);
    if ('page' in found) return found;
    const { provider, details } = found;
    const id = typeof request.query.result === 'string' ? request.query.result : '';
    const kept = /^[0-9a-f-]{36}$/.test(id)
      ? await this.records.find('FederationDone', id)
      : undefined;
    if (kept === undefined || kept.uid !== details.uid) return this.show(request, response);
    await this.records.destroy('FederationDone', id);
    if (typeof kept.accountId !== 'string') {
      return {
        page: signInPage({
          action: `${signInPath(details.uid)}/login`,
          project: this.served.current.label,
          client: await this.clientView(provider, details),
          returnTo: returnTarget(details.params.redirect_uri),
          error: typeof kept.refused === 'string' ? kept.refused : 'Not signed in.',
          federated: `${signInPath(details.uid)}/federated`,
        }),
        status: 401,
      };
    }
    const user = await this.users.findById(kept.accountId);
    await this.audit.record({
      action: 'oauth_sign_in',
      actor: user?.username ?? null,
      target: details.params.client_id?.slice(0, 255) ?? null,
      details: { via: 'identity provider' },
    });
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: kept.accountId } },
      { mergeWithLastSubmission: false },
    );
    return null;
  }

  /** The page of a step: the sign-in form or the consent form. */
  async show(request: Request, response: Response): Promise<Step> {
    const found = await this.interaction(request, response);
    if ('page' in found) return found;
    const { provider, details } = found;
    const client = await this.clientView(provider, details);
    const project = this.served.current.label;
    const returnTo = returnTarget(details.params.redirect_uri);
    const action = `${signInPath(details.uid)}/${details.prompt.name === 'login' ? 'login' : 'consent'}`;
    if (details.prompt.name === 'login') {
      const federated = this.federation.enabled
        ? `${signInPath(details.uid)}/federated`
        : undefined;
      return { page: signInPage({ action, project, client, returnTo, federated }), status: 200 };
    }
    const user = await this.users.findById(details.session?.accountId ?? '');
    if (user === null)
      return {
        page: problemPage('This sign-in has ended. Start again from your assistant.'),
        status: 400,
      };
    return {
      page: consentPage({ action, project, username: user.username, client, returnTo }),
      status: 200,
    };
  }

  /** The sign-in form sent: the person, checked as at the login endpoint, or the form again. */
  async login(request: Request, response: Response, form: Record<string, unknown>): Promise<Step> {
    const found = await this.interaction(request, response);
    if ('page' in found) return found;
    const { provider, details } = found;
    if (details.prompt.name !== 'login') return this.show(request, response);
    const username = typeof form.username === 'string' ? form.username.slice(0, 255) : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const again = async (error: string, status: number): Promise<Step> => ({
      page: signInPage({
        action: `${signInPath(details.uid)}/login`,
        project: this.served.current.label,
        client: await this.clientView(provider, details),
        returnTo: returnTarget(details.params.redirect_uri),
        error,
        username,
      }),
      status,
    });
    let user;
    try {
      user = await this.auth.checkCredentials(username, password, clientAddress(request));
    } catch (error) {
      // Locked out, as the login endpoint answers it (429, with when to try again).
      if (error instanceof DomainError) return again(error.message, STATUS_OF[error.code]);
      throw error;
    }
    if (user === undefined) return again('Wrong user name or password.', 401);
    await this.auth.signedIn(user, clientAddress(request), details.params.client_id ?? null);
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: user.id } },
      { mergeWithLastSubmission: false },
    );
    return null;
  }

  /** The consent form sent: a grant for the client, or its refusal. */
  async consent(
    request: Request,
    response: Response,
    form: Record<string, unknown>,
  ): Promise<Step> {
    const found = await this.interaction(request, response);
    if ('page' in found) return found;
    const { provider, details } = found;
    if (details.prompt.name !== 'consent') return this.show(request, response);
    const accountId = details.session?.accountId;
    const clientId = details.params.client_id;
    const user = accountId === undefined ? null : await this.users.findById(accountId);
    if (user === null || typeof clientId !== 'string') {
      return {
        page: problemPage('This sign-in has ended. Start again from your assistant.'),
        status: 400,
      };
    }
    if (form.decision !== 'allow') {
      await this.audit.record({
        action: 'oauth_consent',
        actor: user.username,
        target: clientId.slice(0, 255),
        outcome: 'failure',
        details: { reason: 'denied' },
      });
      await provider.interactionFinished(
        request,
        response,
        { error: 'access_denied', error_description: 'The person denied access' },
        { mergeWithLastSubmission: false },
      );
      return null;
    }
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId: user.id, clientId });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    const grantId = await grant.save();
    await this.grants.remember(
      grantId,
      user.id,
      await this.clientView(provider, details),
      GRANT_SECONDS,
    );
    await this.audit.record({
      action: 'oauth_consent',
      actor: user.username,
      target: clientId.slice(0, 255),
      details: { grant: grantId },
    });
    await provider.interactionFinished(
      request,
      response,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
    return null;
  }

  private async interaction(
    request: Request,
    response: Response,
  ): Promise<{ provider: OidcProvider; details: Interaction } | { page: Page; status: number }> {
    if (!this.server.enabled) {
      return { page: problemPage('Signing in here is not enabled on this service.'), status: 404 };
    }
    const provider = await this.server.provider(request);
    try {
      return { provider, details: await provider.interactionDetails(request, response) };
    } catch {
      // No such sign-in, or it expired (10 minutes), or its cookie is not this browser's.
      return {
        page: problemPage(
          'This sign-in has ended or is not this browser’s. Start again from your assistant.',
        ),
        status: 400,
      };
    }
  }

  private async clientView(provider: OidcProvider, details: Interaction): Promise<ClientView> {
    const clientId = String(details.params.client_id ?? '');
    const client: ClientRecord | undefined = await provider.Client.find(clientId).catch(
      () => undefined,
    );
    return clientViewOf(clientId, client, details.params.redirect_uri);
  }
}

/**
 * The client as shown: its own name (or id), and the origin that vouches for it: its metadata document's
 * host for a client ID metadata document (fetched over HTTPS from there), else the host it sends the
 * person back to (the one thing of a registered client's that is checked at every step).
 */
export function clientViewOf(
  clientId: string,
  client: ClientRecord | undefined,
  redirectUri: unknown,
): ClientView {
  const name = (client?.clientName ?? clientId).slice(0, 100);
  if (/^https:\/\//.test(clientId)) {
    try {
      return { name, origin: new URL(clientId).host };
    } catch {
      // fall through
    }
  }
  try {
    return { name, origin: new URL(String(redirectUri)).host || String(redirectUri).slice(0, 100) };
  } catch {
    return { name, origin: 'unknown origin' };
  }
}

/** A step that could not go on: the problem's page with its status (a provider unreachable is a 503). */
function problemStep(error: DomainError): Step {
  return {
    page: problemPage(error.message),
    status: STATUS_OF[error.code],
    retryAfterSeconds: error.retryAfterSeconds,
  };
}
