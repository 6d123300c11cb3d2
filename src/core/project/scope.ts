import { Caller, isSignedIn } from '@/core/caller';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';
import type { CallerView } from '@/core/parameters/selection-value';
import type { Scope } from '@/core/project/project';

/** Whether the caller may open an item of this scope: public (anyone), protected (signed in), private (admins). */
export function canOpen(scope: Scope, caller: Caller): boolean {
  switch (scope) {
    case 'public':
      return true;
    case 'protected':
      return isSignedIn(caller);
    case 'private':
      return caller.isAdmin;
  }
}

/**
 * Whether the caller may open this item: by its scope, or, for an embedding token's holder, whether it is
 * the token's item (whatever its scope: the token's signer granted it).
 */
export function canOpenItem(
  kind: 'dataset' | 'dashboard',
  item: { name: string; scope: Scope },
  caller: Caller,
): boolean {
  if (caller.embed) return caller.embed.kind === kind && caller.embed.name === item.name;
  return canOpen(item.scope, caller);
}

/**
 * 401 for an anonymous caller who needs to sign in, 403 for a signed-in caller without the right. An
 * embedding token's holder reaches this only for the token's own item (`findItem` answers 404 for others).
 */
export function requireScope(scope: Scope, caller: Caller, what: string): void {
  if (caller.embed) return;
  if (canOpen(scope, caller)) return;
  if (!isSignedIn(caller)) throw new AuthenticationRequiredError(`Sign in to open ${what}`);
  throw new ForbiddenError(`You do not have access to ${what}`);
}

/** The caller as parameters and models see it. */
export function callerView(caller: Caller): CallerView {
  return { username: caller.username, isAdmin: caller.isAdmin, fields: caller.fields };
}
