import { Inject, Injectable } from '@nestjs/common';
import { createPublicKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeJwt, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { Counter } from 'prom-client';
import { JwtKeys } from '@/auth/jwt-keys';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import { ConfigError } from '@/config/config-error';
import { SECRETS, type Secrets } from '@/config/secrets';
import type { Caller } from '@/core/caller';
import { embedCaller } from '@/core/embedding/embed-caller';
import {
  EMBED_AUDIENCE,
  EmbedClaimsError,
  ISSUED_BY_OPERATOR,
  checkEmbedTarget,
  parseEmbedClaims,
  type EmbedClaims,
} from '@/core/embedding/embed-claims';
import type { EmbedTokenPlan } from '@/core/embedding/embed-token-plan';
import { InvalidTokenError } from '@/core/errors';
import { UUID } from '@/auth/tokens.service';
import { ServedProject } from '@/core/project/served-project';
import { EmbedRevocationsRepository } from '@/database/tables/embed-revocations.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { MetricsService } from '@/metrics/metrics.service';

/** Who signed an embedding token: Drey for an administrator (`iss: "drey"`), or the host application. */
const DREY_ISSUER = 'drey';
/** An embedding token is read from its JWT only up to this size: it names one item and some values. */
const MAX_TOKEN_CHARS = 16_384;

/**
 * Tokens whose kind is kept, and the longest kept: any text may be sent as a token, so the table holds at
 * most 4 MB (a login token has about 200 characters; a longer token is decoded each time).
 */
const KINDS_MAX = 4096;
const KIND_KEPT_MAX_CHARS = 1024;

function audienceIsEmbed(token: string): boolean {
  try {
    const { aud } = decodeJwt(token);
    return aud === EMBED_AUDIENCE || (Array.isArray(aud) && aud.includes(EMBED_AUDIENCE));
  } catch {
    return false;
  }
}
// Clocks of the host application and Drey may differ a little.
const CLOCK_TOLERANCE_S = 30;
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

/**
 * Embedding tokens (docs/embedding.md): JWTs that open one dataset or dashboard, with parameter values they
 * lock and the user attributes its SQL reads. Verified with jose, the library that already checks identity
 * providers' tokens here: Drey's own (an administrator's, signed with JWT_SECRET, `iss: "drey"`), and the
 * host application's (EMBED_SECRET, HS256; or EMBED_PUBLIC_KEY_FILE). Every use of one that names an id
 * reads the revocations, so that a revoked token is refused at once by every process.
 */
@Injectable()
export class EmbedTokensService {
  private readonly dreyKeys: JwtKeys;
  private readonly hostSecret?: Uint8Array;
  private readonly hostPublicKey?: KeyObject;
  private readonly uses: Counter<'kind'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRETS) secrets: Secrets,
    private readonly revocations: EmbedRevocationsRepository,
    private readonly served: ServedProject,
    private readonly users: UsersRepository,
    metrics: MetricsService,
  ) {
    this.dreyKeys = new JwtKeys(secrets);
    const { secret, publicKeyFile } = config.embedding;
    if (secret) this.hostSecret = new TextEncoder().encode(secret);
    if (publicKeyFile) {
      try {
        this.hostPublicKey = createPublicKey(readFileSync(publicKeyFile));
      } catch (error) {
        throw new ConfigError(
          'EMBED_PUBLIC_KEY_FILE',
          `must name a readable PEM public key: ${(error as Error).message}`,
        );
      }
    }
    this.uses = new Counter({
      name: 'drey_embed_requests_total',
      help: 'Requests made with an embedding token, by the kind of item it opens',
      labelNames: ['kind'],
      registers: [metrics.registry],
    });
  }

  /**
   * Whether a bearer token is an embedding's (its `aud` says so), without checking it. Every request with a
   * token asks, so the answer, which depends on the text alone, is kept per token rather than decoded
   * again (as JwtStrategy keeps checked signatures; a full table starts again; see docs/performance.md,
   * "Figures behind the code", "Telling an embedding token").
   */
  isEmbedToken(token: string): boolean {
    if (token.length > MAX_TOKEN_CHARS) return false;
    if (token.length > KIND_KEPT_MAX_CHARS) return audienceIsEmbed(token);
    let known = this.kinds.get(token);
    if (known === undefined) {
      known = audienceIsEmbed(token);
      if (this.kinds.size >= KINDS_MAX) this.kinds.clear();
      this.kinds.set(token, known);
    }
    return known;
  }

  /** {@link isEmbedToken}'s answers by token text. */
  private readonly kinds = new Map<string, boolean>();

  /**
   * The caller an embedding token stands for; 401 `invalid_token` saying why when it stands for none: not
   * for this project (name and major version), an item the project does not have, revoked, an attribute
   * that is no user field, or, for a token Drey signed, an issuer who is no longer an administrator.
   */
  async callerOf(token: string): Promise<Caller> {
    const { payload, drey } = await this.verify(token);
    const project = this.served.current;
    let claims: EmbedClaims;
    let caller: Caller;
    try {
      claims = parseEmbedClaims(payload);
      checkEmbedTarget(claims, project);
      caller = embedCaller(claims, project.userFields);
    } catch (error) {
      if (error instanceof EmbedClaimsError) throw new InvalidTokenError(error.message);
      throw error;
    }
    if (drey) await this.checkIssuer(claims.issuedBy);
    const id = claims.grant.tokenId;
    if (id !== null && (await this.revocations.isRevoked(id))) {
      throw new InvalidTokenError('The embedding token was revoked');
    }
    this.uses.inc({ kind: claims.grant.kind });
    return caller;
  }

  /**
   * A token Drey signed opens no more than its issuer may now: the administrator named by `by` must still
   * exist and be an administrator (read at each use, as a Drey token's row is). The command line's tokens
   * (`by: "cli"`) stand for whoever holds the service's secret, as a host application's do.
   */
  private async checkIssuer(issuedBy: string | null): Promise<void> {
    if (issuedBy === ISSUED_BY_OPERATOR) return;
    if (issuedBy === null || !UUID.test(issuedBy)) {
      throw new InvalidTokenError(
        'The embedding token does not name the administrator who issued it',
      );
    }
    const issuer = await this.users.findById(issuedBy);
    if (!issuer?.isAdmin) {
      throw new InvalidTokenError(
        'The administrator who issued this embedding token no longer exists or is no longer an administrator',
      );
    }
  }

  private async verify(
    token: string,
  ): Promise<{ payload: Record<string, unknown>; drey: boolean }> {
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw new InvalidTokenError('The embedding token is not a JWT');
    }
    const drey = issuer === DREY_ISSUER;
    const key = drey ? this.dreyKeys.keyFor(token).key : undefined;
    const algorithms = drey ? ['HS256'] : this.hostAlgorithms();
    if (!drey && algorithms.length === 0) {
      throw new InvalidTokenError(
        'Embedding tokens signed by a host application are not accepted here: configure EMBED_SECRET or ' +
          'EMBED_PUBLIC_KEY_FILE',
      );
    }
    try {
      const { payload } = await jwtVerify(
        token,
        (header) => {
          const chosen = key ?? (header.alg === 'HS256' ? this.hostSecret : this.hostPublicKey);
          // jose refuses an algorithm outside `algorithms` first; this is for what slips past that.
          if (!chosen) throw new InvalidTokenError('No key here checks this embedding token');
          return chosen;
        },
        {
          audience: EMBED_AUDIENCE,
          algorithms,
          requiredClaims: ['exp'],
          clockTolerance: CLOCK_TOLERANCE_S,
          ...(drey ? { issuer: DREY_ISSUER } : {}),
        },
      );
      const ahead = (payload.exp as number) - Date.now() / 1000;
      if (ahead > this.config.embedding.maxMinutes * 60 + CLOCK_TOLERANCE_S) {
        throw new InvalidTokenError(
          `The embedding token expires more than ${this.config.embedding.maxMinutes} minutes from now ` +
            '(EMBED_TOKEN_MAX_MINUTES): embedding tokens are short-lived',
        );
      }
      return { payload, drey };
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      if (error instanceof joseErrors.JWTExpired) {
        throw new InvalidTokenError('The embedding token has expired');
      }
      if (error instanceof joseErrors.JOSEError) {
        throw new InvalidTokenError(`The embedding token was refused: ${error.code}`);
      }
      throw error;
    }
  }

  private hostAlgorithms(): string[] {
    const algorithms: string[] = [];
    if (this.hostSecret) algorithms.push('HS256');
    if (this.hostPublicKey) algorithms.push(...ASYMMETRIC);
    return algorithms;
  }
}

/**
 * The token of a plan, signed by Drey (`iss: "drey"`) with its JWT key: the service's `POST P/embed-tokens`
 * and `drey embed-token` sign alike.
 */
export function signEmbedToken(plan: EmbedTokenPlan, key: KeyObject): Promise<string> {
  return new SignJWT(plan.claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(DREY_ISSUER)
    .setAudience(EMBED_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(Math.floor(plan.expiresAt.getTime() / 1000))
    .sign(key);
}
