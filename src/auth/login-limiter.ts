import { Inject, Injectable } from '@nestjs/common';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { DomainError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';

/**
 * Failed logins per username and per client address within a window, kept in Postgres so that every
 * server process counts the same attempts. Past the limit, logins answer 429 with Retry-After.
 */
@Injectable()
export class LoginLimiter {
  constructor(
    private readonly failures: LoginFailuresRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private keys(username: string, address: string): string[] {
    return [`user:${username.slice(0, 250)}`, `addr:${address}`];
  }

  /** Throws 429 when either key has reached the limit; the wait is until its oldest failure leaves the window. */
  async check(username: string, address: string): Promise<void> {
    const rows = await this.failures.countRecent(
      this.keys(username, address),
      this.config.loginWindowSeconds,
    );
    const blocked = rows.filter(
      (row) =>
        row.failures >=
        (row.key.startsWith('user:')
          ? this.config.loginMaxFailures
          : this.config.loginMaxFailuresPerAddress),
    );
    if (blocked.length === 0) return;
    const until = Math.max(
      ...blocked.map((row) => row.oldest.getTime() + this.config.loginWindowSeconds * 1000),
    );
    const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    throw new DomainError('rate_limited', 'Too many failed logins: try again later', retryAfter);
  }

  async recordFailure(username: string, address: string): Promise<void> {
    await this.failures.add(this.keys(username, address));
  }

  /** A successful login clears the username's failures (not the address's), and old rows go. */
  async recordSuccess(username: string): Promise<void> {
    await this.failures.clear(this.keys(username, '')[0], this.config.loginWindowSeconds);
  }
}
