import type { Caller } from '@/core/caller';
import {
  fieldValueProblem,
  type UserField,
  type UserFieldValue,
  withFieldDefaults,
} from '@/core/user-fields';
import { EmbedClaimsError, type EmbedClaims } from '@/core/embedding/embed-claims';

/**
 * The caller an embedding token's checked claims stand for: its viewer, with the project's fields from its
 * `user` attributes ({@link EmbedClaimsError} when one is no field or not of its type), opening its item.
 */
export function embedCaller(claims: EmbedClaims, fields: UserField[]): Caller {
  return {
    username: embedUsername(claims),
    userId: null,
    isAdmin: false,
    fields: embedAttributes(claims.user, fields),
    tokenId: claims.grant.tokenId,
    embed: claims.grant,
  };
}

/** The name an embedding's caller goes by in logs, the audit and `user.username`. */
export function embedUsername(claims: Pick<EmbedClaims, 'subject' | 'grant'>): string {
  return `embed:${claims.subject ?? claims.grant.tokenId ?? claims.grant.name}`;
}

/**
 * The `user` attributes as a user's fields: each of the project's type and enum, defaults for the others. A
 * name that is no field is refused rather than ignored (a typo would otherwise let a row rule fall back to
 * its default).
 */
export function embedAttributes(
  input: Record<string, unknown>,
  fields: UserField[],
): Record<string, UserFieldValue> {
  const values: Record<string, UserFieldValue> = {};
  for (const [name, value] of Object.entries(input)) {
    const field = fields.find((candidate) => candidate.name === name);
    if (!field) {
      throw new EmbedClaimsError(
        `The embedding's user attribute "${name}" is no user field of the project`,
      );
    }
    const problem = fieldValueProblem(field, value);
    if (problem) throw new EmbedClaimsError(`The embedding's user attribute "${name}" ${problem}`);
    values[name] = value as UserFieldValue;
  }
  return withFieldDefaults(values, fields);
}
