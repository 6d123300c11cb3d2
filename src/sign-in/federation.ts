import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { SsoService } from '@/auth/sso/sso.service';
import { APP_CONFIG, AppConfig } from '@/config/config';
import type { OidcConfig } from '@/config/sso-config';
import { InvalidRequestError, NotReadyError } from '@/core/errors';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { AuthorizationServer } from '@/oauth/authorization-server';
import { SIGN_IN_PREFIX, signInPath } from '@/oauth/oauth-paths';
import { JsonLogger } from '@/runtime/json-logger';

/** Where the identity provider sends the person back: one fixed address, registered at the provider. */
export const FEDERATION_CALLBACK = `${SIGN_IN_PREFIX}/callback`;

/** A sign-in sent to the provider, kept by its `state` until the person comes back (10 minutes). */
const MODEL = 'Federation';
const SECONDS = 600;

/** The parts of `openid-client` (v6, the certified OpenID relying-party library) used here. */
interface OpenIdClient {
  discovery(
    server: URL,
    clientId: string,
    metadata?: string,
    clientAuthentication?: unknown,
    options?: { execute?: unknown[] },
  ): Promise<unknown>;
  allowInsecureRequests: unknown;
  None(): unknown;
  randomPKCECodeVerifier(): string;
  calculatePKCECodeChallenge(verifier: string): Promise<string>;
  randomState(): string;
  buildAuthorizationUrl(config: unknown, parameters: Record<string, string>): URL;
  authorizationCodeGrant(
    config: unknown,
    currentUrl: URL,
    checks: { pkceCodeVerifier: string; expectedState: string },
  ): Promise<{ access_token: string; claims(): Record<string, unknown> | undefined }>;
  fetchUserInfo(
    config: unknown,
    accessToken: string,
    expectedSubject: string,
  ): Promise<Record<string, unknown>>;
}

let openIdClient: OpenIdClient | undefined;

/** The library, an ES module only, loaded on first use through Node's own require (as oidc-provider). */
function client(): OpenIdClient {
  openIdClient ??= createRequire(__filename)('openid-client') as OpenIdClient;
  return openIdClient;
}

/**
 * Signing a person in through the corporate identity provider from Drey's own sign-in page: Drey is then
 * the provider's OpenID client (`openid-client`, authorization code flow with PKCE), maps the identity its
 * ID token names as every SSO mode maps it (SsoService), and finishes its own authorization for the
 * assistant, which so registers with Drey even where the provider lets no client register. On when Drey's
 * authorization server is, with OIDC_ISSUER and OIDC_CLIENT_ID.
 */
@Injectable()
export class Federation {
  private configuration?: Promise<unknown>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly server: AuthorizationServer,
    private readonly records: OAuthRecordsRepository,
    private readonly sso: SsoService,
    private readonly logger: JsonLogger,
  ) {}

  get enabled(): boolean {
    return this.server.enabled && this.oidc?.clientId !== undefined;
  }

  private get oidc(): OidcConfig | undefined {
    return this.config.sso.oidc;
  }

  /** Where to send the browser for the interaction `uid`: the provider's authorization endpoint. */
  async start(request: IncomingMessage, uid: string): Promise<URL> {
    const library = client();
    const configuration = await this.discovered();
    const verifier = library.randomPKCECodeVerifier();
    const state = library.randomState();
    await this.records.upsert(MODEL, state, { uid, verifier }, SECONDS);
    return library.buildAuthorizationUrl(configuration, {
      redirect_uri: this.callbackUrl(request),
      scope: this.scopes(configuration),
      code_challenge: await library.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
  }

  /**
   * The person back from the provider: the code exchanged and the ID token checked by the library, the
   * identity provisioned; the interaction it belongs to and the account it signed in, or why not.
   */
  async finish(
    request: IncomingMessage,
  ): Promise<{ uid: string; accountId?: string; refused?: string }> {
    const current = new URL(request.url ?? '/', this.server.issuer(request));
    const state = current.searchParams.get('state') ?? '';
    const kept =
      state.length > 0 && state.length <= 255 ? await this.records.find(MODEL, state) : undefined;
    if (kept === undefined) throw new InvalidRequestError('This sign-in has ended: start again');
    await this.records.destroy(MODEL, state);
    const uid = String(kept.uid);
    if (current.searchParams.has('error')) {
      return { uid, refused: 'The identity provider did not sign you in.' };
    }
    let claims: Record<string, unknown> | undefined;
    try {
      const tokens = await client().authorizationCodeGrant(await this.discovered(), current, {
        pkceCodeVerifier: String(kept.verifier),
        expectedState: state,
      });
      const fromIdToken = tokens.claims();
      // Providers put the profile (name, groups) in the ID token or at the userinfo endpoint: both read.
      claims =
        fromIdToken === undefined
          ? undefined
          : {
              ...(await client().fetchUserInfo(
                await this.discovered(),
                tokens.access_token,
                String(fromIdToken.sub),
              )),
              ...fromIdToken,
            };
    } catch {
      return { uid, refused: 'The identity provider’s answer could not be checked.' };
    }
    const caller = claims === undefined ? undefined : await this.sso.fromSignInClaims(claims);
    if (caller?.userId === undefined || caller.userId === null) {
      return {
        uid,
        refused: 'This identity cannot sign in here (its name belongs to a local user).',
      };
    }
    return { uid, accountId: caller.userId };
  }

  /** Where the browser goes back to once `finish` ran: the interaction's own address (its cookie's path). */
  donePath(uid: string): string {
    return `${signInPath(uid)}/federated/done`;
  }

  /** openid, profile and email, and the groups claim's scope where the provider offers one of its name. */
  private scopes(configuration: unknown): string {
    const offered = (
      configuration as { serverMetadata(): { scopes_supported?: string[] } }
    ).serverMetadata().scopes_supported;
    const groups = this.oidc?.groupsClaim;
    return [
      'openid',
      'profile',
      'email',
      ...(groups && offered?.includes(groups) ? [groups] : []),
    ].join(' ');
  }

  private callbackUrl(request: IncomingMessage): string {
    return `${new URL(this.server.issuer(request)).origin}${FEDERATION_CALLBACK}`;
  }

  private discovered(): Promise<unknown> {
    const oidc = this.oidc;
    if (oidc?.clientId === undefined) throw new NotReadyError('No identity provider client', null);
    const library = client();
    this.configuration ??= library
      .discovery(
        new URL(oidc.issuer),
        oidc.clientId,
        oidc.clientSecret,
        oidc.clientSecret === undefined ? library.None() : undefined,
        // A provider on plain HTTP is one the operator configured so (OIDC_ISSUER), as for its tokens.
        oidc.issuer.startsWith('http:') ? { execute: [library.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        // Not kept: the next sign-in asks the provider again. The person gets a 503 page that says so.
        this.configuration = undefined;
        this.logger.emit('warn', 'identity provider unreachable', {
          issuer: oidc.issuer,
          error: error instanceof Error ? error.message : String(error),
        });
        throw new NotReadyError(
          'Your organization’s sign-in cannot be reached just now. Try again in a moment, or sign in with a Drey account.',
          30,
        );
      });
    return this.configuration;
  }
}
