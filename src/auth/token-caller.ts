import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { claimsOf } from '@/auth/jwt.strategy';
import { JwtKeys } from '@/auth/jwt-keys';
import { TokensService } from '@/auth/tokens.service';
import type { Caller } from '@/core/caller';
import { InvalidTokenError } from '@/core/errors';
import { SECRETS, Secrets } from '@/config/secrets';

/**
 * A Drey token checked outside HTTP: `drey mcp` signs in with a named token from the environment. The
 * checks of JwtStrategy, by @nestjs/jwt (jsonwebtoken) rather than passport, which needs a request: HS256,
 * signed with JWT_SECRET (or a previous secret until its time is up), not expired, and its row active, read
 * on every call so that a revocation is seen at once.
 */
@Injectable()
export class TokenCaller {
  private readonly keys: JwtKeys;

  constructor(
    private readonly jwt: JwtService,
    private readonly tokens: TokensService,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    this.keys = new JwtKeys(secrets);
  }

  async callerOf(token: string): Promise<Caller> {
    const { key, acceptedUntil } = this.keys.keyFor(token);
    if (acceptedUntil !== undefined && Date.now() >= acceptedUntil) throw new InvalidTokenError();
    let payload: unknown;
    try {
      // jsonwebtoken takes the KeyObject JwtKeys gives, as passport-jwt hands it over in JwtStrategy.
      payload = await this.jwt.verifyAsync(token, {
        secret: key as unknown as string,
        algorithms: ['HS256'],
      });
    } catch {
      throw new InvalidTokenError();
    }
    const claims = claimsOf(payload);
    const caller = claims && (await this.tokens.callerOf(claims));
    if (!caller) throw new InvalidTokenError();
    return caller;
  }
}
