import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import { type Caller, userCaller } from '@/core/caller';
import { InvalidTokenError } from '@/core/errors';
import { ServedProject } from '@/core/project/served-project';
import { OAuthRecordsRepository } from '@/database/tables/oauth-records.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { isMcpPath } from '@/http/routes';
import { AuthorizationServer } from '@/oauth/authorization-server';
import { mcpResourceOf } from '@/oauth/mcp-resource';

/** Whether a bearer token has the shape of the authorization server's: opaque, no JWT's dots. */
export function isOpaqueToken(token: string): boolean {
  return !token.includes('.');
}

/**
 * The caller an access token of Drey's authorization server stands for, at the MCP endpoint only: the token
 * is looked up on every call (a revoked grant takes its tokens with it, so the next call is refused), must
 * not have expired, and must have been issued for this very endpoint (RFC 8707: its audience is the URL of
 * the endpoint called, on this deployment's issuer). The grant's last use is noted for the person's list.
 */
@Injectable()
export class OAuthAccess {
  constructor(
    private readonly server: AuthorizationServer,
    private readonly users: UsersRepository,
    private readonly records: OAuthRecordsRepository,
    private readonly served: ServedProject,
  ) {}

  get enabled(): boolean {
    return this.server.enabled;
  }

  async callerOf(token: string, request: IncomingMessage | undefined): Promise<Caller> {
    const path =
      request === undefined ? undefined : new URL(request.url ?? '/', 'http://x').pathname;
    if (request === undefined || path === undefined || !isMcpPath(path)) {
      throw new InvalidTokenError(
        'This token was issued for the MCP endpoint and is accepted there only',
      );
    }
    const provider = await this.server.provider(request);
    const record = await provider.AccessToken.find(token).catch(() => undefined);
    if (record === undefined || record.isExpired) throw new InvalidTokenError();
    const audience = Array.isArray(record.aud) ? record.aud : [record.aud];
    if (!audience.includes(mcpResourceOf(this.server.resourceOrigin(request), path))) {
      throw new InvalidTokenError('This token was issued for another resource');
    }
    const user = await this.users.findById(record.accountId);
    if (user === null) throw new InvalidTokenError();
    void this.records.touch('Grant', record.grantId).catch(() => undefined);
    return userCaller(
      { id: user.id, username: user.username, isAdmin: user.isAdmin, fields: user.fields },
      this.served.current.userFields,
      null,
    );
  }
}
