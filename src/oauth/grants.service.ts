import { Injectable } from '@nestjs/common';
import { AuditService } from '@/audit/audit.service';
import { type Caller, asAdministrator } from '@/core/caller';
import { ForbiddenError, NotFoundError } from '@/core/errors';
import { formatTimestamp } from '@/core/timestamps';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import type { GrantRecordDto } from '@/oauth/dto/grant-record.dto';

/** How a grant's client was shown to the person who allowed it, kept beside the grant. */
export interface GrantClient {
  name: string;
  origin: string;
}

/** The model of the rows that keep a grant's client as shown (they go with the grant: same grant id). */
const GRANT_CLIENT = 'GrantClient';
/** A person has at most this many grants listed. */
const LISTED = 500;

/**
 * A person's grants to assistants (their consent to a client, and the tokens issued under it): listed
 * beside their named tokens, with the client's name and last use, and revocable by them and by
 * administrators; a revoked grant takes its tokens with it, so the assistant's next call is refused.
 */
@Injectable()
export class GrantsService {
  constructor(
    private readonly records: OAuthRecordsRepository,
    private readonly users: UsersRepository,
    private readonly audit: AuditService,
  ) {}

  /** Keeps how the client was shown, for the list (called once the grant is saved). */
  async remember(
    grantId: string,
    accountId: string,
    client: GrantClient,
    seconds: number,
  ): Promise<void> {
    await this.records.upsert(GRANT_CLIENT, grantId, { grantId, accountId, ...client }, seconds);
  }

  /** The grants of `username` (the caller's own unless given; others' for administrators only). */
  async list(caller: Caller, username?: string): Promise<GrantRecordDto[]> {
    const owner = await this.ownerOf(caller, username);
    const grants = await this.records.listByAccount('Grant', owner.id, LISTED);
    const clients = new Map(
      (await this.records.listByAccount(GRANT_CLIENT, owner.id, LISTED)).map((row) => [
        row.id,
        row.payload,
      ]),
    );
    return grants.map((grant) => {
      const clientId = text(grant.payload.clientId);
      const client = clients.get(grant.id);
      return {
        grant_id: grant.id,
        username: owner.username,
        client_id: clientId,
        client_name: text(client?.name) || clientId,
        client_origin: text(client?.origin),
        created_at: formatTimestamp(grant.createdAt),
        last_used_at: grant.usedAt === null ? null : formatTimestamp(grant.usedAt),
      };
    });
  }

  /** Ends a grant and its tokens: the caller's own, or anyone's for an administrator. */
  async revoke(caller: Caller, grantId: string): Promise<void> {
    const grant = grantId.length <= 255 ? await this.records.find('Grant', grantId) : undefined;
    const mine = grant !== undefined && grant.accountId === caller.userId;
    if (grant === undefined || (!mine && asAdministrator(caller) === null)) {
      throw new NotFoundError(`No grant with id "${grantId.slice(0, 100)}"`);
    }
    await this.records.revokeByGrantId(grantId);
    await this.records.destroy('Grant', grantId);
    await this.audit.record({
      action: 'oauth_revoke',
      actor: caller.username,
      target: text(grant.clientId).slice(0, 255),
      details: {
        grant: grantId,
        reason: mine ? 'revoked by its owner' : 'revoked by an administrator',
      },
    });
  }

  private async ownerOf(
    caller: Caller,
    username?: string,
  ): Promise<{ id: string; username: string }> {
    if (username === undefined || username === caller.username) {
      if (caller.userId === undefined || caller.userId === null || caller.username === null) {
        throw new ForbiddenError('Grants are a signed-in user’s');
      }
      return { id: caller.userId, username: caller.username };
    }
    if (asAdministrator(caller) === null) {
      throw new ForbiddenError('Only administrators may list another user’s grants');
    }
    const user = await this.users.findByUsername(username);
    if (user === null) throw new NotFoundError(`No user "${username.slice(0, 100)}"`);
    return { id: user.id, username: user.username };
  }
}

/** A stored field that should be a string, or empty. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
