import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AuditService } from '@/audit/audit.service';
import { signEmbedToken } from '@/auth/embed-tokens.service';
import { JwtKeys } from '@/auth/jwt-keys';
import { APP_CONFIG, type AppConfig } from '@/config/config';
import { SECRETS, type Secrets } from '@/config/secrets';
import { auditActor, type AdminCaller } from '@/core/caller';
import { embedCaller } from '@/core/embedding/embed-caller';
import { isTokenId, parseEmbedClaims } from '@/core/embedding/embed-claims';
import {
  issuedDetails,
  planEmbedToken,
  type EmbedTokenPlan,
  type EmbedTokenRequest,
} from '@/core/embedding/embed-token-plan';
import { DomainError, type ErrorCode, ForbiddenError, InvalidRequestError } from '@/core/errors';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';
import { EmbedRevocationsRepository } from '@/database/tables/embed-revocations.repository';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';

/** What a use of a token whose locked values do not fit its viewer would answer. */
const SELECTION_REFUSALS = new Set<ErrorCode>(['invalid_parameter_selection', 'unknown_parameter']);

export interface IssuedEmbedToken {
  token: string;
  id: string;
  expiresAt: Date;
  kind: 'dataset' | 'dashboard';
  name: string;
}

/**
 * Embedding tokens issued and revoked by administrators (docs/embedding.md). A room above the parameter
 * widgets because a token is tried before it is signed: its locked values are evaluated as its first use
 * would evaluate them, for its viewer's fields. Checking tokens is the auth room's (EmbedTokensService).
 */
@Injectable()
export class EmbeddingService {
  private readonly keys: JwtKeys;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SECRETS) secrets: Secrets,
    private readonly revocations: EmbedRevocationsRepository,
    private readonly served: ServedProject,
    private readonly widgets: ParameterWidgetsService,
    private readonly audit: AuditService,
  ) {
    this.keys = new JwtKeys(secrets);
  }

  /**
   * `POST P/embed-tokens`: a token for one dataset or dashboard of the project, signed by Drey and naming
   * the administrator (`by`), whose rights bound it at each use. 400 `invalid_request` for an item that
   * does not exist, a parameter it does not have, a user attribute that is no field, or locked values that
   * the viewer's fields make invalid (every use of the token would be a 400).
   */
  async issue(admin: AdminCaller, body: EmbedTokenRequest): Promise<IssuedEmbedToken> {
    // Every administrator has a row (SSO provisions one); a token must name the one whose rights bound it.
    if (admin.userId === null)
      throw new ForbiddenError('Embedding tokens are issued by a user of Drey');
    const project = this.served.current;
    const plan = planEmbedToken(project, body, {
      maxMinutes: this.config.embedding.maxMinutes,
      id: randomUUID(),
      now: new Date(),
      issuedBy: admin.userId,
    });
    await this.tryFirstUse(plan, project);
    const token = await signEmbedToken(plan, this.keys.current);
    await this.audit.recordBy(admin, 'embed_token.create', plan.id, issuedDetails(plan));
    return { token, id: plan.id, expiresAt: plan.expiresAt, kind: plan.kind, name: plan.name };
  }

  /** The item's widgets for the token's viewer, as its first use asks for them: its refusal, as a 400. */
  private async tryFirstUse(plan: EmbedTokenPlan, project: Project): Promise<void> {
    const viewer = embedCaller(parseEmbedClaims(plan.claims), project.userFields);
    try {
      await this.widgets.ofItem(plan.kind, plan.name, viewer, emptyParameterRequest());
    } catch (error) {
      if (error instanceof DomainError && SELECTION_REFUSALS.has(error.code)) {
        throw new InvalidRequestError(`Every use of this token would be refused: ${error.message}`);
      }
      throw error;
    }
  }

  /**
   * `DELETE P/embed-tokens/{id}`: the token with this `jti` (Drey's or a host application's) opens nothing
   * any more, on every process, until it would have expired.
   */
  async revoke(admin: AdminCaller, id: string): Promise<void> {
    if (!isTokenId(id)) {
      throw new InvalidRequestError('A token id is 1-128 printable characters');
    }
    const until = new Date(Date.now() + (this.config.embedding.maxMinutes * 60 + 60) * 1000);
    await this.revocations.prune();
    // The revocation and its audit row commit together, or the refusal is audited (a dropped connection).
    await this.audit.act(auditActor(admin), 'embed_token.revoke', id, () =>
      this.revocations.revoke(id, admin.username, until),
    );
  }
}
