import type { UserFieldValue } from '@/core/project/user-fields';

/** Who is calling: a signed-in user with their fields, or nobody. Every service receives this. */
export interface Caller {
  /** Null for an anonymous caller. */
  username: string | null;
  userId: string | null;
  isAdmin: boolean;
  fields: Record<string, UserFieldValue>;
  /** The `jti` of the token used, if any. */
  tokenId: string | null;
}

export const ANONYMOUS: Caller = Object.freeze({
  username: null,
  userId: null,
  isAdmin: false,
  fields: Object.freeze({}) as Record<string, UserFieldValue>,
  tokenId: null,
});

export function isSignedIn(
  caller: Caller,
): caller is Caller & { username: string; userId: string } {
  return caller.username !== null;
}
