import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-jwt';
import { bearerTokenOf } from '@/auth/bearer-token';
import { JwtKeys } from '@/auth/jwt-keys';
import { TokenClaims, TokensService, UUID } from '@/auth/tokens.service';
import type { Caller } from '@/core/caller';
import { SECRETS, Secrets } from '@/config/secrets';

/**
 * Why the strategy refuses, handed to the guard as passport's `info`: no token at all (an anonymous caller,
 * not an error), a token with a good signature but bad claims or no record, or one signed with a previous
 * secret whose time is up. passport-jwt's own failures (signature, expiry, shape) come as jsonwebtoken's
 * errors.
 */
export type TokenRefusal =
  'no_token' | 'malformed_claims' | 'no_record' | 'previous_secret_expired';

/** A checked token: its claims, and when it stops counting if a previous secret signed it. */
interface Verified {
  claims: TokenClaims;
  /** Milliseconds since the epoch: JWT_PREVIOUS_SECRETS_UNTIL, for a token signed with one of them. */
  acceptedUntil?: number;
}

/** Tokens whose signature was checked, kept by their text (a few MB at most). */
const VERIFIED_MAX = 10_000;

/**
 * Drey's bearer tokens: HS256 only, signed with JWT_SECRET (or, during a rotation, with one of
 * JWT_PREVIOUS_SECRETS until JWT_PREVIOUS_SECRETS_UNTIL: JwtKeys picks the key that signed a token).
 * passport-jwt checks the signature and the expiry; `validate` reads the token's row on every request
 * (TokenLookup batches those reads), so a revocation or a user's deletion is seen at once by every
 * process. Failures are reported to passport with a reason, never thrown: the guard decides what they mean
 * over HTTP.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  /**
   * A signature checks out the same way every time, so a token's is checked once (by jsonwebtoken, about
   * 16 µs of CPU per token); after that only the expiry, which depends on the time, is checked again.
   */
  private readonly verified = new Map<string, Verified>();
  /** Requests whose token a previous secret signed, with the end of its acceptance, for `validate`. */
  private readonly signedWithPrevious: WeakMap<Request, number>;

  constructor(
    private readonly tokens: TokensService,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    const keys = new JwtKeys(secrets);
    const signedWithPrevious = new WeakMap<Request, number>();
    super({
      jwtFromRequest: bearerTokenOf,
      // passport-jwt hands the key to jsonwebtoken as it is (a KeyObject, see JwtKeys), and makes a fixed
      // key a provider like this one anyway.
      secretOrKeyProvider: (
        request: Request,
        token: string,
        done: (error: null, key: string) => void,
      ) => {
        const { key, acceptedUntil } = keys.keyFor(token);
        if (acceptedUntil !== undefined) signedWithPrevious.set(request, acceptedUntil);
        done(null, key as unknown as string);
      },
      algorithms: ['HS256'],
      passReqToCallback: true,
    });
    this.signedWithPrevious = signedWithPrevious;
  }

  /**
   * Skips jsonwebtoken for a token whose signature was already checked and that has not expired since;
   * every other token goes through passport-jwt. Either way the token's row is read.
   */
  override authenticate(request: Request, options?: object): void {
    const token = bearerTokenOf(request);
    // passport-jwt would fail with a new Error("No auth token"), whose stack trace alone made the guard
    // 30 times slower for anonymous requests (33 µs against 1 µs) in a micro-benchmark.
    if (token === null) {
      this.fail('no_token' satisfies TokenRefusal, 401);
      return;
    }
    const known = this.verified.get(token);
    if (known === undefined) {
      super.authenticate(request, options);
      return;
    }
    const { claims, acceptedUntil } = known;
    // As jsonwebtoken decides it: expired from the second `exp` names.
    if (claims.exp !== undefined && Math.floor(Date.now() / 1000) >= claims.exp) {
      this.verified.delete(token);
      this.fail(new Error('jwt expired'), 401);
      return;
    }
    // A previous secret's token was checked while it was accepted; no longer, however often it was seen.
    if (acceptedUntil !== undefined && Date.now() >= acceptedUntil) {
      this.verified.delete(token);
      this.fail('previous_secret_expired' satisfies TokenRefusal, 401);
      return;
    }
    this.tokens.callerOf(claims).then(
      (caller) =>
        caller ? this.success(caller) : this.fail('no_record' satisfies TokenRefusal, 401),
      (error: unknown) => this.error(error as Error),
    );
  }

  /** After passport-jwt checked the signature: the caller, or `[false, reason]`. */
  async validate(request: Request, payload: unknown): Promise<Caller | [false, TokenRefusal]> {
    const claims = claimsOf(payload);
    if (!claims) return [false, 'malformed_claims'];
    const acceptedUntil = this.signedWithPrevious.get(request);
    // The key was picked just before the end of the rotation: the end wins.
    if (acceptedUntil !== undefined && Date.now() >= acceptedUntil) {
      return [false, 'previous_secret_expired'];
    }
    this.remember(bearerTokenOf(request), { claims, acceptedUntil });
    return (await this.tokens.callerOf(claims)) ?? [false, 'no_record'];
  }

  private remember(token: string | null, verified: Verified): void {
    if (token === null || this.verified.has(token)) return;
    if (this.verified.size >= VERIFIED_MAX) {
      this.verified.delete(this.verified.keys().next().value as string);
    }
    this.verified.set(token, verified);
  }
}

export function claimsOf(payload: unknown): TokenClaims | undefined {
  const { sub, jti, exp } = (payload ?? {}) as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof jti !== 'string' || !UUID.test(jti)) return undefined;
  return typeof exp === 'number' ? { sub, jti, exp } : { sub, jti };
}
