import { Inject, Injectable } from '@nestjs/common';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { DomainError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { addressKey, lockoutOf, userKey } from '@/core/users/login-lockout';

/**
 * Failed logins per username and per client address within a window, kept in Postgres so that every
 * server process counts the same attempts. Past the limit, logins answer 429 with Retry-After, and the
 * body says the same wait. An administrator lifts a username's lock (UsersService.unlock).
 */
@Injectable()
export class LoginLimiter {
  constructor(
    private readonly failures: LoginFailuresRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private keys(username: string, address: string): string[] {
    return [userKey(username), addressKey(address)];
  }

  /** Throws 429 when either key has reached the limit; the wait is until its oldest failure leaves the window. */
  async check(username: string, address: string): Promise<void> {
    const rows = await this.failures.countRecent(
      this.keys(username, address),
      this.config.loginWindowSeconds,
    );
    const lockout = lockoutOf(
      rows,
      {
        maxFailures: this.config.loginMaxFailures,
        maxFailuresPerAddress: this.config.loginMaxFailuresPerAddress,
        windowSeconds: this.config.loginWindowSeconds,
      },
      Date.now(),
    );
    if (!lockout) return;
    const wait = lockout.retryAfterSeconds;
    const after = `try again in ${wait} second${wait === 1 ? '' : 's'}`;
    throw new DomainError(
      'rate_limited',
      lockout.by === 'user'
        ? `Too many failed logins for this username: ${after}, or ask an administrator to lift the lock`
        : `Too many failed logins from this address: ${after}`,
      wait,
    );
  }

  async recordFailure(username: string, address: string): Promise<void> {
    await this.failures.add(this.keys(username, address));
  }

  /** A successful login clears the username's failures (not the address's), and old rows go. */
  async recordSuccess(username: string): Promise<void> {
    await this.failures.clear(userKey(username), this.config.loginWindowSeconds);
  }
}
