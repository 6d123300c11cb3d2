import { Injectable } from '@nestjs/common';
import { LoginLimiter } from '@/auth/login-limiter';
import { Caller, isSignedIn } from '@/auth/caller';
import { IssuedToken, TokenOptions, TokensService } from '@/auth/tokens.service';
import { AuthenticationRequiredError, DomainError, InvalidRequestError } from '@/common/errors';
import { JsonLogger } from '@/common/json-logger';
import { UsersService } from '@/users/users.service';
import type { AccessToken } from '@/auth/access-token.entity';
import type { User } from '@/users/user.entity';

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
  ) {}

  /** OAuth2 password grant: checks the form, the rate limit and the password, then issues a login token. */
  async login(form: LoginForm, address: string): Promise<IssuedToken> {
    if (form.grant_type !== undefined && form.grant_type !== '' && form.grant_type !== 'password') {
      throw new DomainError('unsupported_grant_type', 'grant_type must be "password"');
    }
    if (typeof form.username !== 'string' || form.username === '') {
      throw new InvalidRequestError('The form field "username" is required');
    }
    if (typeof form.password !== 'string' || form.password === '') {
      throw new InvalidRequestError('The form field "password" is required');
    }
    const username = form.username;
    await this.limiter.check(username, address);
    const user = await this.users.checkPassword(username, form.password);
    if (!user) {
      await this.limiter.recordFailure(username, address);
      this.logger.emit('warn', 'login failed', { username: username.slice(0, 100), address });
      throw new DomainError('invalid_credentials', 'Incorrect username or password');
    }
    await this.limiter.recordSuccess(username);
    this.logger.emit('info', 'login', { username, address });
    void this.tokens.prune().catch(() => undefined);
    return this.tokens.issue(user);
  }

  async createToken(caller: Caller, options: TokenOptions): Promise<IssuedToken> {
    return this.tokens.issue(await this.userOf(caller), options);
  }

  async listTokens(caller: Caller): Promise<AccessToken[]> {
    return this.tokens.list((await this.userOf(caller)).id);
  }

  async revokeToken(caller: Caller, tokenId: string): Promise<void> {
    await this.tokens.revoke((await this.userOf(caller)).id, tokenId);
  }

  async changePassword(caller: Caller, oldPassword: string, newPassword: string): Promise<void> {
    await this.users.changePassword(await this.userOf(caller), oldPassword, newPassword);
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
