import { type UserField, type UserFieldValue, withFieldDefaults } from '@/core/user-fields';

/**
 * What an embedding token grants (core/embedding/embed-claims.ts): one dataset or dashboard, with parameter
 * values it locks and defaults for the others. A caller holding one may open that item and nothing else.
 */
export interface EmbedGrant {
  /** The token's `jti`, by which it can be revoked; null when the host application gave none. */
  tokenId: string | null;
  kind: 'dataset' | 'dashboard';
  name: string;
  /** Values that the request may not change, by parameter name. */
  locked: Readonly<Record<string, EmbedValue>>;
  /** Values used when the request gives none, by parameter name. */
  defaults: Readonly<Record<string, EmbedValue>>;
}

/** A parameter value as a token carries it: the JSON form of a request body's selection. */
export type EmbedValue = string | number | boolean | (string | number)[];

/** Who is calling: a signed-in user with their fields, or nobody. Every service receives this. */
export interface Caller {
  /** Null for an anonymous caller. */
  username: string | null;
  userId: string | null;
  isAdmin: boolean;
  fields: Record<string, UserFieldValue>;
  /** The `jti` of the token used, if any. */
  tokenId: string | null;
  /** Set for the holder of an embedding token: the one item it may open. */
  embed?: EmbedGrant;
}

export const ANONYMOUS: Caller = Object.freeze({
  username: null,
  userId: null,
  isAdmin: false,
  fields: Object.freeze({}) as Record<string, UserFieldValue>,
  tokenId: null,
});

/** A user as their row holds them. */
export interface UserOfCaller {
  id: string;
  username: string;
  isAdmin: boolean;
  fields: Record<string, UserFieldValue>;
}

/**
 * The caller a user is, with the fields the project declares (defaults for the ones it added since the
 * user was stored): what a Drey token of theirs stands for, and `drey run --as` runs as.
 */
export function userCaller(
  user: UserOfCaller,
  userFields: UserField[],
  tokenId: string | null,
): Caller {
  return {
    username: user.username,
    userId: user.id,
    isAdmin: user.isAdmin,
    fields: withFieldDefaults(user.fields, userFields),
    tokenId,
  };
}

export function isSignedIn(
  caller: Caller,
): caller is Caller & { username: string; userId: string } {
  return caller.username !== null;
}

declare const ADMINISTRATOR: unique symbol;

/**
 * A caller allowed what only administrators may do. Services whose every operation is an administrator's
 * take this type and check nothing: the decision was made before the call, by {@link asAdministrator}, which
 * the bearer guard applies to `@AdminOnly()` routes. The brand exists for the compiler only, so a plain
 * `Caller` (anonymous, or a user without the flag) does not type-check where an administrator is needed.
 */
export type AdminCaller = Caller & { readonly isAdmin: true; readonly [ADMINISTRATOR]: true };

/**
 * The one rule of who is an administrator: a caller whose token, identity headers or identity provider say
 * so. Null for anyone else. What an administrator may see more of on routes open to everyone (the catalog's
 * models and lineage, the items of scope `admin`, a failing model's engine message) reads `isAdmin` of the
 * same caller.
 */
export function asAdministrator(caller: Caller): AdminCaller | null {
  return caller.isAdmin ? (caller as AdminCaller) : null;
}

/**
 * How the audit log names a caller: its user name and, for the holder of an embedding token that has an id,
 * that id too (`embed:<sub>#<jti>`), so that two tokens of one viewer can be told apart. The user name
 * alone stays what templates and cache keys read.
 */
export function auditActor(caller: Caller): string | null {
  return caller.embed?.tokenId ? `${caller.username}#${caller.embed.tokenId}` : caller.username;
}
