import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { createSecretKey } from 'node:crypto';
import { Strategy } from 'passport-jwt';
import { bearerTokenOf } from '@/auth/bearer-token';
import { TokenClaims, TokensService, UUID } from '@/auth/tokens.service';
import type { Caller } from '@/core/caller';
import { SECRETS, Secrets } from '@/config/secrets';

/** Why a token with a good signature is refused; passport-jwt hands it to the guard as `info`. */
export type TokenRefusal = 'malformed_claims' | 'no_record';

/** Tokens whose signature was checked, kept by their text (a few MB at most). */
const VERIFIED_MAX = 10_000;

/**
 * Drey's bearer tokens: HS256 only, signed with JWT_SECRET. passport-jwt checks the signature and the
 * expiry; `validate` reads the token's row on every request (TokenLookup batches those reads), so a
 * revocation or a user's deletion is seen at once by every process. Failures are reported to passport
 * with a reason, never thrown: the guard decides what they mean over HTTP.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  /**
   * A signature checks out the same way every time, so a token's is checked once (by jsonwebtoken, about
   * 16 µs of CPU per token); after that only the expiry, which depends on the time, is checked again.
   */
  private readonly verified = new Map<string, TokenClaims>();

  constructor(
    private readonly tokens: TokensService,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    super({
      jwtFromRequest: bearerTokenOf,
      // A KeyObject: given the secret as a string, jsonwebtoken first tries to read it as a public key on
      // every verification, which throws, and that failed attempt was a fifth of the CPU time of a cached
      // dataset request in the profile. passport-jwt hands the key to jsonwebtoken as it is.
      secretOrKey: createSecretKey(Buffer.from(secrets.jwtSecret, 'utf8')) as unknown as string,
      algorithms: ['HS256'],
      passReqToCallback: true,
    });
  }

  /**
   * Skips jsonwebtoken for a token whose signature was already checked and that has not expired since;
   * every other token goes through passport-jwt. Either way `validate` reads the token's row.
   */
  override authenticate(request: Request, options?: object): void {
    const token = bearerTokenOf(request);
    const known = token === null ? undefined : this.verified.get(token);
    if (token === null || known === undefined) {
      super.authenticate(request, options);
      return;
    }
    // As jsonwebtoken decides it: expired from the second `exp` names.
    if (known.exp !== undefined && Math.floor(Date.now() / 1000) >= known.exp) {
      this.verified.delete(token);
      this.fail(new Error('jwt expired'), 401);
      return;
    }
    this.validate(request, known).then(
      (result) => (Array.isArray(result) ? this.fail(result[1], 401) : this.success(result)),
      (error: unknown) => this.error(error as Error),
    );
  }

  /** The caller of a token with a good signature, or `[false, reason]`. */
  async validate(request: Request, payload: unknown): Promise<Caller | [false, TokenRefusal]> {
    const claims = claimsOf(payload);
    if (!claims) return [false, 'malformed_claims'];
    this.remember(bearerTokenOf(request), claims);
    const caller = await this.tokens.callerOf(claims);
    return caller ?? [false, 'no_record'];
  }

  private remember(token: string | null, claims: TokenClaims): void {
    if (token === null || this.verified.has(token)) return;
    if (this.verified.size >= VERIFIED_MAX) {
      this.verified.delete(this.verified.keys().next().value as string);
    }
    this.verified.set(token, claims);
  }
}

function claimsOf(payload: unknown): TokenClaims | undefined {
  const { sub, jti, exp } = (payload ?? {}) as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof jti !== 'string' || !UUID.test(jti)) return undefined;
  return typeof exp === 'number' ? { sub, jti, exp } : { sub, jti };
}
