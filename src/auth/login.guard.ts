import { ExecutionContext, Injectable, ValidationPipe, createParamDecorator } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { assertStorable, readMultipartForm } from '@/http/input/input-limits';
import { mediaType } from '@/http/input/media-type';
import { LoginFormDto } from '@/auth/dto/login-form.dto';
import type { LoginForm } from '@/auth/auth.service';
import { missingField } from '@/auth/local.strategy';
import { validationPipe } from '@/http/input/validation';
import type { User } from '@/database/tables/users.entity';
import { DomainError, InvalidRequestError } from '@/core/errors';

/** Where the guard leaves the user whose credentials checked out (not `user`: that is the bearer's). */
const LOGIN_USER = 'loginUser';

/**
 * The login form of both layouts, through passport-local (LocalStrategy). Guards run before interceptors
 * and pipes, so this one first does their part for the form: it reads a multipart body (bounded as
 * http/input/input-limits.ts says, files refused) and validates the fields like any DTO. Then, in the order the
 * service always checked them: `grant_type`, missing fields (400), the rate limit (429), the password (401).
 */
@Injectable()
export class LoginGuard extends AuthGuard('local') {
  private readonly validation: ValidationPipe = validationPipe();

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    // BodyTypeGuard has let only the form's two types through; Express parsed the other one.
    if (mediaType(request.headers['content-type']) === 'multipart/form-data') {
      await readMultipartForm(request, context.switchToHttp().getResponse<Response>());
      assertStorable(request.body, 'form');
    }
    const form = (await this.validation.transform(request.body, {
      type: 'body',
      metatype: LoginFormDto,
    })) as LoginForm;
    if (form.grant_type !== undefined && form.grant_type !== '' && form.grant_type !== 'password') {
      throw new DomainError('unsupported_grant_type', 'grant_type must be "password"');
    }
    return (await super.canActivate(context)) as boolean;
  }

  override getAuthenticateOptions() {
    return { property: LOGIN_USER };
  }

  /** passport-local's status 400 is a missing field; any other failure is wrong credentials. */
  override handleRequest<TUser = User>(
    error: Error | null,
    user: unknown,
    _info: unknown,
    context: ExecutionContext,
    status?: unknown,
  ): TUser {
    if (error) throw error;
    if (user) return user as TUser;
    if (status === 400) {
      const form = (context.switchToHttp().getRequest<Request>().body ?? {}) as LoginForm;
      throw new InvalidRequestError(`The form field "${missingField(form)}" is required`);
    }
    throw new DomainError('invalid_credentials', 'Incorrect username or password');
  }
}

/** The user the login guard signed in. */
export const LoginUser = createParamDecorator(
  (_: unknown, context: ExecutionContext) =>
    (context.switchToHttp().getRequest<Request>() as Request & Record<string, unknown>)[
      LOGIN_USER
    ] as User,
);
