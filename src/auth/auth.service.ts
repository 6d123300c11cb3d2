import { Injectable } from '@nestjs/common';
import { DreyTokens } from '@/auth/drey-tokens';
import { AuditService } from '@/audit/audit.service';
import { LoginLimiter } from '@/auth/login-limiter';
import { Caller, isSignedIn } from '@/core/caller';
import { IssuedToken, TokenOptions, TokensService } from '@/auth/tokens.service';
import { AuthenticationRequiredError } from '@/core/errors';
import { JsonLogger } from '@/runtime/json-logger';
import { UsersService } from '@/users/users.service';
import type { AccessToken } from '@/database/tables/access-tokens.entity';
import type { User } from '@/database/tables/users.entity';
import { TokenRecords } from '@/database/token-records/token-records';

/** The login form's fields, as sent (LoginFormDto validates their types). */
export interface LoginForm {
  username?: unknown;
  password?: unknown;
  grant_type?: unknown;
}

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly limiter: LoginLimiter,
    private readonly logger: JsonLogger,
    private readonly audit: AuditService,
    private readonly tokenRecords: TokenRecords,
    private readonly drey: DreyTokens,
  ) {}

  /**
   * The user of a login form's username and password (LocalStrategy asks), or undefined when they do not
   * match. Past the limit of failed logins it throws 429; failures are counted, audited and logged.
   */
  async checkCredentials(
    username: string,
    password: string,
    address: string,
  ): Promise<User | undefined> {
    try {
      await this.limiter.check(username, address);
    } catch (error) {
      await this.audit.record({
        action: 'login',
        actor: username,
        outcome: 'failure',
        details: { reason: 'rate_limited' },
      });
      throw error;
    }
    const user = await this.users.checkPassword(username, password);
    if (user) return user;
    await this.limiter.recordFailure(username, address);
    await this.audit.record({
      action: 'login',
      actor: username,
      outcome: 'failure',
      details: { reason: 'invalid_credentials' },
    });
    this.logger.emit('warn', 'login failed', { username: username.slice(0, 100), address });
    return undefined;
  }

  /**
   * Drey's sign-in page of its authorization server (sign-in/), once the credentials checked out: the
   * lockout's count starts again and the sign-in is audited; the client's tokens are the library's.
   */
  async signedIn(user: User, address: string, clientId: string | null): Promise<void> {
    await this.limiter.recordSuccess(user.username);
    await this.audit.record({
      action: 'oauth_sign_in',
      actor: user.username,
      target: clientId?.slice(0, 255) ?? null,
    });
    this.logger.emit('info', 'oauth sign-in', { username: user.username, address });
  }

  /**
   * Ends a browser's session (sign-in/browser-session.ts): its login token's record is deleted, so the
   * token is refused from the next request on, on every process. A token that is not valid ends nothing.
   */
  async endSession(token: string): Promise<void> {
    const caller = await this.drey.callerOf(token).catch(() => undefined);
    if (caller?.tokenId == null || caller.username === null) return;
    await this.tokens.end(caller.tokenId);
    await this.audit.record({ action: 'logout', actor: caller.username, target: caller.tokenId });
  }

  /** OAuth2 password grant, once the credentials checked out: a login token. */
  async login(user: User, address: string): Promise<IssuedToken> {
    await this.limiter.recordSuccess(user.username);
    const issued = await this.audit.act(
      user.username,
      'login',
      null,
      () => this.tokens.issue(user),
      (token) => ({ target: token.tokenId }),
    );
    this.logger.emit('info', 'login', { username: user.username, address });
    void this.tokens.prune().catch(() => undefined);
    return issued;
  }

  async createToken(caller: Caller, options: TokenOptions): Promise<IssuedToken> {
    const user = await this.userOf(caller);
    return this.audit.act(
      caller.username,
      'token.create',
      null,
      () => this.tokens.issue(user, options),
      (issued) => ({
        target: issued.tokenId,
        details: {
          title: options.title ?? null,
          expires_at: issued.expiresAt?.toISOString() ?? null,
        },
      }),
    );
  }

  async listTokens(caller: Caller): Promise<AccessToken[]> {
    return this.tokens.list((await this.userOf(caller)).id);
  }

  async revokeToken(caller: Caller, tokenId: string): Promise<void> {
    const user = await this.userOf(caller);
    await this.audit.act(caller.username, 'token.revoke', tokenId, () =>
      this.tokens.revoke(user.id, tokenId),
    );
    // Committed: refused from every process's next request.
    await this.tokenRecords.changed();
  }

  async changePassword(caller: Caller, oldPassword: string, newPassword: string): Promise<void> {
    const user = await this.userOf(caller);
    await this.audit.act(caller.username, 'password.change', caller.username, () =>
      this.users.changePassword(user, oldPassword, newPassword),
    );
  }

  async me(caller: Caller): Promise<User> {
    return this.userOf(caller);
  }

  private async userOf(caller: Caller): Promise<User> {
    if (!isSignedIn(caller)) throw new AuthenticationRequiredError();
    const user = await this.users.findByUsername(caller.username);
    if (!user) throw new AuthenticationRequiredError();
    return user;
  }
}
