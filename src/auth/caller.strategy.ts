import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import passport, { Strategy } from 'passport';
import { CallerResolver } from '@/auth/caller-resolver';
import { credentialOf } from '@/auth/credentials';
import type { Caller } from '@/core/caller';

/** passport's name for {@link CallerStrategy}. */
export const CALLER_STRATEGY = 'caller';

/**
 * Passport as the HTTP adapter of CallerResolver: the request's credential (credentialOf) goes to the
 * resolver, and what it says is passport's answer: the caller (anonymous included), or the error (a
 * refused credential's 401, a database that is down). Not passport-jwt: its check needs a request, and the
 * same check must serve `drey mcp` over stdio, which has none (docs/architecture.md).
 */
class ResolverStrategy extends Strategy {
  constructor(private readonly resolver: CallerResolver) {
    super();
  }

  override authenticate(request: Request): void {
    let resolved: Promise<Caller>;
    try {
      resolved = this.resolver.resolve(credentialOf(request));
    } catch (error) {
      this.error(error);
      return;
    }
    resolved.then(
      (caller) => this.success(caller),
      (error: unknown) => this.error(error as Error),
    );
  }
}

/**
 * Registers {@link ResolverStrategy} with passport under {@link CALLER_STRATEGY}, which BearerAuthGuard
 * names. (@nestjs/passport's PassportStrategy mixin is for strategies that call back a `validate`; this one
 * has nothing to validate after the resolver.)
 */
@Injectable()
export class CallerStrategy {
  constructor(resolver: CallerResolver) {
    passport.use(CALLER_STRATEGY, new ResolverStrategy(resolver));
  }
}
