import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { KeyObject, createSecretKey, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccessToken } from '@/auth/access-token.entity';
import { TokenLookup } from '@/auth/token-lookup';
import { Caller } from '@/core/caller';
import { InvalidRequestError, InvalidTokenError, NotFoundError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { SECRETS, Secrets } from '@/config/secrets';
import { PROJECT } from '@/project/project.tokens';
import type { Project } from '@/core/project/project';
import { withFieldDefaults } from '@/users/user-fields.rules';
import type { User } from '@/users/user.entity';

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

interface Claims {
  sub?: unknown;
  jti?: unknown;
  exp?: unknown;
}

/** What a token's checked signature vouches for. */
interface Verified {
  sub: string;
  jti: string;
  /** Seconds since the epoch; absent for a token that never expires. */
  exp?: number;
}

/** Tokens whose signature was checked, kept by their text (a few MB at most). */
const VERIFIED_MAX = 10_000;

/** The nil UUID: never a token's id (they are random, version 4). */
const NO_TOKEN = '00000000-0000-0000-0000-000000000000';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

@Injectable()
export class TokensService {
  /**
   * The HS256 key as a KeyObject. Given the secret as a string, jsonwebtoken first tries to read it as a
   * public key on every verification, which throws, and that failed attempt was a fifth of the CPU time of
   * a cached dataset request in the profile.
   */
  private readonly verifyKey: KeyObject;
  private readonly records: TokenLookup;
  /**
   * A signature checks out the same way every time, so a token's is checked once; only the expiry, which
   * depends on the time, is checked again on each use. The record is still read on every request.
   */
  private readonly verified = new Map<string, Verified>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PROJECT) private readonly project: Project,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    this.verifyKey = createSecretKey(Buffer.from(secrets.jwtSecret, 'utf8'));
    this.records = new TokenLookup(dataSource);
  }

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
    await this.dataSource.getRepository(AccessToken).insert({
      id: tokenId,
      userId: user.id,
      title: named ? options.title : null,
      createdAt: now,
      expiresAt,
    });
    const claims: Record<string, unknown> = {
      sub: user.username,
      jti: tokenId,
      iat: Math.floor(now.getTime() / 1000),
    };
    if (expiresAt) claims.exp = Math.floor(expiresAt.getTime() / 1000);
    const accessToken = await this.jwt.signAsync(claims);
    return { accessToken, tokenId, username: user.username, isAdmin: user.isAdmin, expiresAt };
  }

  /**
   * The caller a bearer token stands for. The signature (HS256 only), the expiry and the token's record
   * are all checked: a revoked token or a deleted user's token has no record.
   */
  async authenticate(token: string): Promise<Caller> {
    const claims = await this.verify(token);
    // Read on every request, so that a revocation or a user's deletion takes effect at once everywhere.
    const row = await this.records.find(claims.jti);
    if (!row || row.username !== claims.sub) throw new InvalidTokenError();
    return {
      username: row.username,
      userId: row.user_id,
      isAdmin: row.is_admin,
      fields: withFieldDefaults(row.fields, this.project.userFields),
      tokenId: claims.jti,
    };
  }

  /** The claims of a token with a valid HS256 signature that has not expired. */
  private async verify(token: string): Promise<Verified> {
    const known = this.verified.get(token);
    if (known) {
      // As jsonwebtoken decides it: expired from the second `exp` names.
      if (known.exp !== undefined && Math.floor(Date.now() / 1000) >= known.exp) {
        this.verified.delete(token);
        throw new InvalidTokenError();
      }
      return known;
    }
    let claims: Claims;
    try {
      claims = await this.jwt.verifyAsync<Claims & object>(token, {
        algorithms: ['HS256'],
        // jsonwebtoken takes a KeyObject; @nestjs/jwt's option type names only strings and Buffers.
        secret: this.verifyKey as unknown as Buffer,
      });
    } catch {
      throw new InvalidTokenError();
    }
    const { sub, jti, exp } = claims;
    if (typeof sub !== 'string' || typeof jti !== 'string' || !UUID.test(jti)) {
      throw new InvalidTokenError();
    }
    const verified: Verified = typeof exp === 'number' ? { sub, jti, exp } : { sub, jti };
    if (this.verified.size >= VERIFIED_MAX) {
      this.verified.delete(this.verified.keys().next().value as string);
    }
    this.verified.set(token, verified);
    return verified;
  }

  /**
   * Runs the token lookup that every request with a token runs (same pool, same prepared statement) for a
   * token id nobody has: the readiness check, so that it fails whenever those requests would.
   */
  async checkLookup(): Promise<void> {
    await this.records.find(NO_TOKEN);
  }

  /** The caller's named tokens that have not expired. */
  list(userId: string): Promise<AccessToken[]> {
    return this.dataSource
      .getRepository(AccessToken)
      .createQueryBuilder('t')
      .where('t.user_id = :userId', { userId })
      .andWhere('t.title IS NOT NULL')
      .andWhere('(t.expires_at IS NULL OR t.expires_at > now())')
      .orderBy('t.created_at', 'ASC')
      .getMany();
  }

  /** Revokes one of the caller's named tokens; someone else's or an unknown id is "not found". */
  async revoke(userId: string, tokenId: string): Promise<void> {
    const result = UUID.test(tokenId)
      ? await this.dataSource
          .getRepository(AccessToken)
          .createQueryBuilder()
          .delete()
          .where('id = :tokenId AND user_id = :userId AND title IS NOT NULL', { tokenId, userId })
          .execute()
      : { affected: 0 };
    if (!result.affected) throw new NotFoundError(`No token with id "${tokenId}"`);
  }

  /** Drops records of tokens that expired more than a day ago. */
  async prune(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM access_tokens WHERE expires_at < now() - interval '1 day'`,
    );
  }
}
