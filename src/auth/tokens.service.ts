import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID } from 'node:crypto';
import type { AccessToken } from '@/database/tables/access-tokens.entity';
import { AccessTokensRepository } from '@/database/tables/access-tokens.repository';
import { TokenRecords } from '@/database/token-records/token-records';
import type { User } from '@/database/tables/users.entity';
import { userCaller, type Caller } from '@/core/caller';
import { InvalidRequestError, NotFoundError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { ServedProject } from '@/core/project/served-project';

export interface IssuedToken {
  accessToken: string;
  tokenId: string;
  username: string;
  isAdmin: boolean;
  /** Null for a named token that never expires. */
  expiresAt: Date | null;
}

export interface TokenOptions {
  /** Absent: a temporary token (not listed, not revocable, default lifetime). */
  title?: string;
  /** With a title: minutes until expiry; null or absent: never expires. */
  expiryMinutes?: number | null;
}

/** What a token's checked signature vouches for. */
export interface TokenClaims {
  sub: string;
  jti: string;
  /** Seconds since the epoch; absent for a token that never expires. */
  exp?: number;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Drey's own tokens: issued here, verified by JwtStrategy, valid while their row exists. */
@Injectable()
export class TokensService {
  constructor(
    private readonly tokens: AccessTokensRepository,
    private readonly records: TokenRecords,
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly served: ServedProject,
  ) {}

  /** Issues a token and records it; the record is what keeps it valid. */
  async issue(user: User, options: TokenOptions = {}): Promise<IssuedToken> {
    const named = options.title !== undefined;
    if (named && options.expiryMinutes !== undefined && options.expiryMinutes !== null) {
      if (!Number.isInteger(options.expiryMinutes) || options.expiryMinutes < 1) {
        throw new InvalidRequestError('expiry_minutes must be a whole number from 1 up, or null');
      }
    }
    const minutes = named ? (options.expiryMinutes ?? null) : this.config.tokenExpireMinutes;
    const now = new Date();
    const expiresAt = minutes === null ? null : new Date(now.getTime() + minutes * 60_000);
    const tokenId = randomUUID();
    const claims: Record<string, unknown> = {
      sub: user.username,
      jti: tokenId,
      iat: Math.floor(now.getTime() / 1000),
    };
    if (expiresAt) claims.exp = Math.floor(expiresAt.getTime() / 1000);
    // Signed before its row is written, so that the insert (and the audit row in its transaction) is the
    // last step: a row is never left behind for a token that was not returned.
    const accessToken = await this.jwt.signAsync(claims);
    await this.tokens.insert({
      id: tokenId,
      userId: user.id,
      title: named ? (options.title ?? null) : null,
      createdAt: now,
      expiresAt,
    });
    return { accessToken, tokenId, username: user.username, isAdmin: user.isAdmin, expiresAt };
  }

  /**
   * The caller that verified claims stand for, or undefined when the token has no record: revoked,
   * expired, or its user deleted (and perhaps re-created under the same name, with a new id).
   */
  async callerOf(claims: TokenClaims): Promise<Caller | undefined> {
    // Checked on every request, so that a revocation or a user's deletion takes effect at once everywhere.
    const row = await this.records.find(claims.jti);
    if (!row || row.username !== claims.sub) return undefined;
    return userCaller(
      { id: row.user_id, username: row.username, isAdmin: row.is_admin, fields: row.fields },
      this.served.current.userFields,
      claims.jti,
    );
  }

  /** The caller's named tokens that have not expired. */
  list(userId: string): Promise<AccessToken[]> {
    return this.tokens.listNamed(userId);
  }

  /** Revokes one of the caller's named tokens; someone else's or an unknown id is "not found". */
  async revoke(userId: string, tokenId: string): Promise<void> {
    const revoked = UUID.test(tokenId) && (await this.tokens.deleteNamed(userId, tokenId));
    if (!revoked) throw new NotFoundError(`No token with id "${tokenId}"`);
  }

  /** Ends a token, whatever its kind (a browser's session signing out): its record goes. */
  async end(tokenId: string): Promise<void> {
    if (UUID.test(tokenId)) await this.tokens.deleteById(tokenId);
  }

  /** Drops records of tokens that expired more than a day ago. */
  prune(): Promise<void> {
    return this.tokens.pruneExpired();
  }
}
