import { Inject, Injectable } from '@nestjs/common';
import { errors as joseErrors, jwtVerify } from 'jose';
import { JwtKeys } from '@/auth/jwt-keys';
import { TokenClaims, TokensService, UUID } from '@/auth/tokens.service';
import type { Caller } from '@/core/caller';
import { InvalidTokenError } from '@/core/errors';
import { SECRETS, Secrets } from '@/config/secrets';

/** A checked token: its claims, and when it stops counting if a previous secret signed it. */
interface Verified {
  claims: TokenClaims;
  /** Milliseconds since the epoch: JWT_PREVIOUS_SECRETS_UNTIL, for a token signed with one of them. */
  acceptedUntil?: number;
}

/** Tokens whose signature was checked, kept by their text (a few MB at most). */
const VERIFIED_MAX = 10_000;

/**
 * Drey's own tokens (login and named tokens), for CallerResolver: HS256 only, signed with JWT_SECRET (or,
 * during a rotation, one of JWT_PREVIOUS_SECRETS until JWT_PREVIOUS_SECRETS_UNTIL: JwtKeys picks the key),
 * not expired, and their row active, read on every use (TokenRecords) so that a revocation or a user's
 * deletion is seen at once by every process. Checked with jose, the library that checks embedding and
 * identity-provider tokens too, because it needs no request: the same check serves HTTP, MCP over stdio and
 * the command line. Every refusal is the same 401 `invalid_token`, at every door.
 */
@Injectable()
export class DreyTokens {
  private readonly keys: JwtKeys;
  /**
   * A signature checks out the same way every time, so a token's is checked once; after that only the
   * expiry, which depends on the time, is checked again (a cached read sends the same token thousands of
   * times a second).
   */
  private readonly verified = new Map<string, Verified>();

  constructor(
    private readonly tokens: TokensService,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    this.keys = new JwtKeys(secrets);
  }

  /** Not `async` on the way of a token already checked: see CallerResolver.resolve. */
  callerOf(token: string): Promise<Caller> {
    const verified = this.verified.get(token);
    if (verified === undefined)
      return this.verify(token).then((checked) => this.use(token, checked));
    return this.use(token, verified);
  }

  private use(token: string, { claims, acceptedUntil }: Verified): Promise<Caller> {
    // As jose and jsonwebtoken decide it: expired from the second `exp` names.
    const expired = claims.exp !== undefined && Math.floor(Date.now() / 1000) >= claims.exp;
    // A previous secret's token was checked while it was accepted; no longer, however often it was seen.
    if (expired || (acceptedUntil !== undefined && Date.now() >= acceptedUntil)) {
      this.verified.delete(token);
      return Promise.reject(new InvalidTokenError());
    }
    return this.tokens.callerOf(claims).then((caller) => {
      if (!caller) throw new InvalidTokenError();
      return caller;
    });
  }

  private async verify(token: string): Promise<Verified> {
    const { key, acceptedUntil } = this.keys.keyFor(token);
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'] }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof TypeError) {
        throw new InvalidTokenError();
      }
      throw error;
    }
    const claims = claimsOf(payload);
    if (!claims) throw new InvalidTokenError();
    const verified = acceptedUntil === undefined ? { claims } : { claims, acceptedUntil };
    if (this.verified.size >= VERIFIED_MAX) {
      this.verified.delete(this.verified.keys().next().value as string);
    }
    this.verified.set(token, verified);
    return verified;
  }
}

/** The claims a Drey token must carry, or undefined when it does not. */
export function claimsOf(payload: unknown): TokenClaims | undefined {
  const { sub, jti, exp } = (payload ?? {}) as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof jti !== 'string' || !UUID.test(jti)) return undefined;
  return typeof exp === 'number' ? { sub, jti, exp } : { sub, jti };
}
