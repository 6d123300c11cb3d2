import { Inject, Injectable } from '@nestjs/common';
import { createPublicKey, KeyObject, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeJwt, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { Counter } from 'prom-client';
import { AuditService } from '@/audit/audit.service';
import { JwtKeys } from '@/auth/jwt-keys';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import { ConfigError } from '@/config/config-error';
import { SECRETS, type Secrets } from '@/config/secrets';
import type { AdminCaller, Caller } from '@/core/caller';
import {
  EMBED_AUDIENCE,
  EmbedClaimsError,
  embedUsername,
  parseEmbedClaims,
  type EmbedClaims,
} from '@/core/embed';
import { InvalidRequestError, InvalidTokenError, NotFoundError } from '@/core/errors';
import type { Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';
import { valueMatchesType, type UserFieldValue } from '@/core/project/user-fields';
import { EmbedRevocationsRepository } from '@/database/tables/embed-revocations.repository';
import { MetricsService } from '@/metrics/metrics.service';
import { withFieldDefaults } from '@/users/user-fields.rules';

/** Who signed an embedding token: Drey for an administrator (`iss: "drey"`), or the host application. */
const DREY_ISSUER = 'drey';
/** An embedding token is read from its JWT only up to this size: it names one item and some values. */
const MAX_TOKEN_CHARS = 16_384;
const DEFAULT_MINUTES = 10;
// Clocks of the host application and Drey may differ a little.
const CLOCK_TOLERANCE_S = 30;
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

/** What an administrator asks for: `POST P/embed-tokens`'s body. */
export interface EmbedTokenRequest {
  dataset?: unknown;
  dashboard?: unknown;
  params?: unknown;
  defaults?: unknown;
  user?: unknown;
  subject?: unknown;
  expiry_minutes?: unknown;
}

export interface IssuedEmbedToken {
  token: string;
  id: string;
  expiresAt: Date;
  kind: 'dataset' | 'dashboard';
  name: string;
}

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
    private readonly audit: AuditService,
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

  private get project(): Project {
    return this.served.current;
  }

  /** Whether a bearer token is an embedding's (its `aud` says so), without checking it. */
  isEmbedToken(token: string): boolean {
    if (token.length > MAX_TOKEN_CHARS) return false;
    try {
      const { aud } = decodeJwt(token);
      return aud === EMBED_AUDIENCE || (Array.isArray(aud) && aud.includes(EMBED_AUDIENCE));
    } catch {
      return false;
    }
  }

  /** The caller an embedding token stands for; 401 `invalid_token` saying why when it stands for none. */
  async callerOf(token: string): Promise<Caller> {
    const payload = await this.verify(token);
    let claims: EmbedClaims;
    try {
      claims = parseEmbedClaims(payload);
    } catch (error) {
      if (error instanceof EmbedClaimsError) throw new InvalidTokenError(error.message);
      throw error;
    }
    const id = claims.grant.tokenId;
    if (id !== null && (await this.revocations.isRevoked(id))) {
      throw new InvalidTokenError('The embedding token was revoked');
    }
    const fields = this.userFields(claims.user, (message) => new InvalidTokenError(message));
    this.uses.inc({ kind: claims.grant.kind });
    return {
      username: embedUsername(claims),
      userId: null,
      isAdmin: false,
      fields,
      tokenId: id,
      embed: claims.grant,
    };
  }

  private async verify(token: string): Promise<Record<string, unknown>> {
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
      return payload;
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

  /**
   * The `user` attributes as a user's fields, each of the project's type and enum, defaults for the others;
   * a name that is no field is refused rather than ignored (a typo would otherwise widen what a row rule
   * lets through to its default).
   */
  private userFields(
    input: Record<string, unknown>,
    refuse: (message: string) => Error,
  ): Record<string, UserFieldValue> {
    const fields = this.project.userFields;
    const values: Record<string, UserFieldValue> = {};
    for (const [name, value] of Object.entries(input)) {
      const field = fields.find((candidate) => candidate.name === name);
      if (!field)
        throw refuse(`The embedding's user attribute "${name}" is no user field of the project`);
      if (value === null && !field.required) {
        values[name] = null;
        continue;
      }
      if (!valueMatchesType(value, field.type)) {
        throw refuse(`The embedding's user attribute "${name}" must be of type ${field.type}`);
      }
      if (field.enum && !field.enum.includes(value as UserFieldValue)) {
        throw refuse(
          `The embedding's user attribute "${name}" must be one of ${field.enum.map(String).join(', ')}`,
        );
      }
      values[name] = value as UserFieldValue;
    }
    return withFieldDefaults(values, fields);
  }

  /**
   * `POST P/embed-tokens`: a token for one dataset or dashboard of the project, signed by Drey. 400
   * `invalid_request` for an item that does not exist, a parameter it does not have, or a user attribute
   * that is no field.
   */
  async issue(admin: AdminCaller, body: EmbedTokenRequest): Promise<IssuedEmbedToken> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequestError('The body must be a JSON object');
    }
    const kind = body.dataset !== undefined ? 'dataset' : 'dashboard';
    if ((body.dataset === undefined) === (body.dashboard === undefined)) {
      throw new InvalidRequestError('Name one item: "dataset" or "dashboard"');
    }
    const name = kind === 'dataset' ? body.dataset : body.dashboard;
    const items: { name: string; parameters: string[] }[] =
      kind === 'dataset' ? this.project.datasets : this.project.dashboards;
    const item = items.find((candidate) => candidate.name === name);
    if (typeof name !== 'string' || !item) {
      throw new NotFoundError(`No ${kind} named ${JSON.stringify(String(name).slice(0, 100))}`);
    }
    const minutes = body.expiry_minutes ?? DEFAULT_MINUTES;
    const max = this.config.embedding.maxMinutes;
    if (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > max) {
      throw new InvalidRequestError(
        `expiry_minutes must be a whole number from 1 to ${max} (EMBED_TOKEN_MAX_MINUTES)`,
      );
    }
    const id = randomUUID();
    const expiresAt = new Date(Date.now() + minutes * 60_000);
    const claims: Record<string, unknown> = {
      resource: { [kind]: item.name },
      params: body.params ?? {},
      defaults: body.defaults ?? {},
      user: body.user ?? {},
      jti: id,
    };
    if (body.subject !== undefined) claims.sub = body.subject;
    let parsed: EmbedClaims;
    try {
      parsed = parseEmbedClaims(claims);
    } catch (error) {
      if (error instanceof EmbedClaimsError) {
        throw new InvalidRequestError(error.message.replace("The token's", "The request's"));
      }
      throw error;
    }
    const unknown = [
      ...Object.keys(parsed.grant.locked),
      ...Object.keys(parsed.grant.defaults),
    ].find((parameter) => !item.parameters.includes(parameter));
    if (unknown) {
      throw new InvalidRequestError(`The ${kind} "${item.name}" has no parameter "${unknown}"`);
    }
    this.userFields(parsed.user, (message) => new InvalidRequestError(message));
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(DREY_ISSUER)
      .setAudience(EMBED_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.dreyKeys.current);
    await this.audit.recordBy(admin, 'embed_token.create', id, {
      kind,
      item: item.name,
      locked: parsed.grant.locked,
      expiresAt: expiresAt.toISOString(),
    });
    return { token, id, expiresAt, kind, name: item.name };
  }

  /**
   * `DELETE P/embed-tokens/{id}`: the token with this `jti` (Drey's or a host application's) opens nothing
   * any more, on every process, until it would have expired.
   */
  async revoke(admin: AdminCaller, id: string): Promise<void> {
    if (!/^[\x21-\x7e]{1,128}$/.test(id)) {
      throw new InvalidRequestError('A token id is 1-128 printable characters');
    }
    const until = new Date(Date.now() + (this.config.embedding.maxMinutes * 60 + 60) * 1000);
    await this.revocations.prune();
    await this.revocations.revoke(id, admin.username, until);
    await this.audit.recordBy(admin, 'embed_token.revoke', id, {});
  }
}
