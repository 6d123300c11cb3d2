import { USERNAME } from '@/users/user-fields.rules';
import { isStorableText } from '@/core/input-rules';
import { JWTPayload, JWTVerifyGetKey, createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { InvalidTokenError, NotReadyError } from '@/core/errors';
import type { OidcConfig } from '@/config/sso-config';
import type { SsoIdentity } from '@/auth/sso/identity';

// Asymmetric algorithms only: never `none`, never HS* (an HS256 token "signed" with the public key).
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'EdDSA',
];

/**
 * Verifies identity-provider tokens against the provider's JWKS: fetched from the discovery document (or
 * OIDC_JWKS_URL), cached, and fetched again when a token names an unknown key id. Keys are looked up by
 * `kid` in that set only; a `jwk` or `jku` in the token's header is never used.
 */
export class OidcVerifier {
  private keys?: Promise<JWTVerifyGetKey>;

  constructor(
    private readonly config: OidcConfig,
    private readonly fetchJson: (url: string) => Promise<unknown> = defaultFetchJson,
  ) {}

  async verify(token: string): Promise<SsoIdentity> {
    const keys = await this.keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.config.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError && error.code === 'ERR_JWKS_TIMEOUT') {
        throw new NotReadyError('The identity provider did not answer; try again', 10);
      }
      throw new InvalidTokenError('The identity provider token is invalid or expired');
    }
    return identityOfClaims(payload, this.config);
  }

  private keySet(): Promise<JWTVerifyGetKey> {
    this.keys ??= this.discoverJwksUrl().then((url) =>
      createRemoteJWKSet(new URL(url), {
        cooldownDuration: this.config.jwksCooldownSeconds * 1000,
        cacheMaxAge: 10 * 60_000,
        timeoutDuration: 5000,
      }),
    );
    // A failed discovery is retried on the next token instead of being cached.
    this.keys.catch(() => (this.keys = undefined));
    return this.keys.catch(() => {
      throw new NotReadyError('The identity provider could not be reached; try again', 10);
    });
  }

  private async discoverJwksUrl(): Promise<string> {
    if (this.config.jwksUrl) return this.config.jwksUrl;
    const document = (await this.fetchJson(
      `${this.config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
    )) as {
      jwks_uri?: unknown;
    };
    if (typeof document?.jwks_uri !== 'string')
      throw new Error('The discovery document has no jwks_uri');
    return document.jwks_uri;
  }
}

async function defaultFetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/**
 * The identity an identity provider's claims stand for (an access token's, or an ID token's when Drey signs a
 * person in through the provider): its user name claim, groups and email, as every SSO mode maps them.
 */
export function identityOfClaims(
  payload: Record<string, unknown>,
  config: Pick<OidcConfig, 'usernameClaim' | 'groupsClaim'>,
): SsoIdentity {
  const username = payload[config.usernameClaim];
  if (typeof username !== 'string' || username === '') {
    throw new InvalidTokenError(`The token has no "${config.usernameClaim}" claim`);
  }
  // The name becomes a users row: the same rule as for trusted headers and local users.
  if (!USERNAME.test(username)) {
    throw new InvalidTokenError(`The token's "${config.usernameClaim}" is not a usable user name`);
  }
  const rawGroups = payload[config.groupsClaim];
  const groups = Array.isArray(rawGroups)
    ? rawGroups.filter((g): g is string => typeof g === 'string' && isStorableText(g))
    : [];
  const email =
    typeof payload.email === 'string' && isStorableText(payload.email) ? payload.email : undefined;
  return { username, email, groups, source: 'oidc' };
}
