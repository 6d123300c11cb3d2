import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-local';
import { AuthService, LoginForm } from '@/auth/auth.service';
import { clientAddress } from '@/http/request/client-address';
import type { User } from '@/database/tables/users.entity';
import { InvalidRequestError } from '@/core/errors';

/**
 * The login form of both layouts (`username` and `password` fields). passport-local reports a missing
 * field as a failure with status 400; the rate limit, the password check, the audit rows and the log
 * lines are AuthService's.
 */
@Injectable()
export class LocalStrategy extends PassportStrategy(Strategy, 'local') {
  constructor(private readonly auth: AuthService) {
    super({ passReqToCallback: true });
  }

  /** The user whose password this is, or `[false, reason]`; a rate-limited login throws its 429. */
  async validate(
    request: Request,
    username: string,
    password: string,
  ): Promise<User | [false, 'invalid_credentials']> {
    // passport-local falls back to the query string; credentials count only in the form, which access
    // logs do not record.
    const form = (request.body ?? {}) as LoginForm;
    if (form.username !== username || form.password !== password) {
      throw new InvalidRequestError(`The form field "${missingField(form)}" is required`);
    }
    const user = await this.auth.checkCredentials(username, password, clientAddress(request));
    return user ?? [false, 'invalid_credentials'];
  }
}

/** The first of `username` and `password` that the form lacks. */
export function missingField(form: LoginForm): 'username' | 'password' {
  return typeof form.username !== 'string' || form.username === '' ? 'username' : 'password';
}
