import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { JwtKeys } from '@/auth/jwt-keys';
import { UUID } from '@/auth/tokens.service';
import { AuditService } from '@/audit/audit.service';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { SECRETS, Secrets } from '@/config/secrets';
import { ANONYMOUS, Caller, auditActor, userCaller } from '@/core/caller';
import { ForbiddenError, InvalidRequestError, InvalidTokenError } from '@/core/errors';
import { isRecord } from '@/core/parameters/parameter-definition';
import { parseBodySelections } from '@/core/parameters/selection-request';
import { ServedProject } from '@/core/project/served-project';
import { UsersRepository } from '@/database/tables/users.repository';
import { TokenRecords } from '@/database/token-records/token-records';
import { DatasetReplies } from '@/datasets/dataset-replies';
import type { HttpReply } from '@/http/reply/http-reply';

/** The audience of an export link: no other token of Drey's is one, and a link is no other token. */
const AUDIENCE = 'drey:dataset-export';
const ISSUER = 'drey';
/** A link longer than this is refused when issued: a URL past ~8 KB is cut by proxies and browsers. */
export const MAX_LINK_CHARS = 8000;

/** An issued link's token, and when it stops working. */
export interface IssuedLink {
  token: string;
  expiresAt: Date;
}

/**
 * What a link's token vouches for: who asked (their id, checked again at each fetch), the dataset, and the
 * body of the current layout's `POST P/datasets/{name}/results` it stands for (the selections, `x_format`
 * and `x_select`), so that a fetch is that request, answered by the same code.
 */
interface LinkClaims {
  userId: string | null;
  /** The Drey token the link was made with, if any: revoking it ends the link too. */
  tokenId: string | null;
  dataset: string;
  body: Record<string, unknown>;
  jti: string;
}

/**
 * Short-lived signed links to a dataset's full export (the MCP tool `dataset_export`): a JWT signed with the
 * service's own key (JwtKeys: JWT_SECRET, and during a rotation the previous secrets while accepted), by
 * jose as every token of Drey's, with its own audience, valid MCP_EXPORT_LINK_MINUTES. A fetch re-checks the
 * caller as they are now (the user must still exist, and the Drey token the link was made with, if any, must
 * not be revoked; their current fields decide their scope and selections) and is answered by DatasetReplies, as `x_format` over HTTP is: the same content type, file
 * name, export slots and limits. Issuing and fetching are audited.
 */
@Injectable()
export class ExportLinks {
  private readonly keys: JwtKeys;

  constructor(
    private readonly replies: DatasetReplies,
    private readonly users: UsersRepository,
    private readonly records: TokenRecords,
    private readonly audit: AuditService,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRETS) secrets: Secrets,
  ) {
    this.keys = new JwtKeys(secrets);
  }

  /**
   * A link's token for `caller` to the export of `dataset` that `body` asks (as a results POST body), which
   * the caller's checks of it (the tool's) found valid. Not for an embedding's holder: its token opens its
   * item in the page that embeds it, and a link would carry that grant past the token's own life.
   */
  async issue(caller: Caller, dataset: string, body: Record<string, unknown>): Promise<IssuedLink> {
    if (caller.embed) {
      throw new ForbiddenError('An embedding token cannot make export links');
    }
    const expiresAt = new Date(Date.now() + this.config.mcpExportLinkMinutes * 60_000);
    const jti = randomUUID();
    const token = await new SignJWT({
      ds: dataset,
      body,
      ...(caller.tokenId !== null ? { tok: caller.tokenId } : {}),
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(caller.userId ?? '')
      .setJti(jti)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.keys.current);
    if (token.length > MAX_LINK_CHARS) {
      throw new InvalidRequestError(
        `The selections make a link longer than ${MAX_LINK_CHARS} characters: select fewer values, or read the export with x_format over HTTP`,
      );
    }
    return { token, expiresAt };
  }

  /**
   * The export a link stands for, fetched by whoever holds it (`dataset` is the path's, which must be the
   * link's); `address` is the fetching client's (whose export slots an anonymous caller's link takes).
   * A link that is not one, expired or signed with a key no longer accepted, or whose user is gone, is a
   * 401 `invalid_token`; a dataset the user may no longer open is refused as their HTTP read would be.
   */
  async open(dataset: string, token: unknown, address: string): Promise<HttpReply> {
    let claims: LinkClaims | undefined;
    let caller: Caller | undefined;
    try {
      claims = await this.verify(token);
      if (claims.dataset !== dataset) {
        throw new InvalidTokenError('This link is for another dataset');
      }
      caller = await this.callerOf(claims);
      const reply = await this.replies.reply(caller, dataset, parseBodySelections(claims.body), {
        format: undefined,
        shape: 'paged',
        address,
      });
      await this.audit.record({
        action: 'dataset_export_link',
        actor: auditActor(caller),
        target: dataset,
        details: { link: claims.jti, format: claims.body.x_format },
      });
      return reply;
    } catch (error) {
      await this.audit.record({
        action: 'dataset_export_link',
        actor: caller ? auditActor(caller) : null,
        target: claims?.dataset ?? dataset.slice(0, 255),
        outcome: 'failure',
        details: {
          link: claims?.jti ?? null,
          error: error instanceof Error ? error.message.slice(0, 500) : String(error),
        },
      });
      throw error;
    }
  }

  private async verify(token: unknown): Promise<LinkClaims> {
    if (typeof token !== 'string' || token === '') {
      throw new InvalidTokenError('An export link carries its token as ?token=');
    }
    if (token.length > MAX_LINK_CHARS) throw new InvalidTokenError('This is no export link');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.keys.keyFor(token).key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        requiredClaims: ['exp', 'jti', 'sub'],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) {
        throw new InvalidTokenError('This export link has expired: ask for a new one');
      }
      if (error instanceof joseErrors.JOSEError || error instanceof TypeError) {
        throw new InvalidTokenError('This is no export link');
      }
      throw error;
    }
    const { sub, ds, body, jti, tok } = payload;
    if (
      typeof sub !== 'string' ||
      (sub !== '' && !UUID.test(sub)) ||
      typeof ds !== 'string' ||
      !isRecord(body) ||
      typeof jti !== 'string' ||
      (tok !== undefined && (typeof tok !== 'string' || !UUID.test(tok)))
    ) {
      throw new InvalidTokenError('This is no export link');
    }
    return {
      userId: sub === '' ? null : sub,
      tokenId: tok ?? null,
      dataset: ds,
      body,
      jti,
    };
  }

  /**
   * The link's caller as they are now: their current fields and rights; nobody, for a public link. A link
   * made with a Drey token (a named token, an assistant's) lasts no longer than that token: revoking the
   * token ends its links as well.
   */
  private async callerOf({ userId, tokenId }: LinkClaims): Promise<Caller> {
    if (userId === null) return ANONYMOUS;
    const user = await this.users.findById(userId);
    if (!user) throw new InvalidTokenError('The user who made this export link no longer exists');
    if (tokenId !== null) {
      const record = await this.records.find(tokenId);
      if (record?.user_id !== userId) {
        throw new InvalidTokenError(
          'The token this export link was made with was revoked or has expired',
        );
      }
    }
    return userCaller(user, this.served.current.userFields, null);
  }
}
