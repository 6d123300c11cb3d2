import type { SsoConfig } from '@/config/sso-config';
import { UserField, UserFieldValue, valueMatchesType } from '@/core/user-fields';

/** Who an identity provider or proxy says the caller is. */
export interface SsoIdentity {
  username: string;
  email?: string;
  groups: string[];
  /** `header` or `oidc`, for the logs. */
  source: 'header' | 'oidc';
}

/** What the identity grants: `is_admin` from the admin groups, user fields from the field map. */
export interface MappedIdentity {
  isAdmin: boolean;
  fields: Record<string, UserFieldValue>;
}

/**
 * Groups to `is_admin` and user fields. For each mapped field, the first group in the map's own order that
 * the user has sets the value; otherwise the field's default. Pure, unit-tested.
 */
export function mapIdentity(
  identity: SsoIdentity,
  sso: SsoConfig,
  userFields: UserField[],
): MappedIdentity {
  const groups = new Set(identity.groups);
  const fields: Record<string, UserFieldValue> = {};
  for (const field of userFields) {
    const byGroup = sso.fieldMap[field.name];
    const match = byGroup ? Object.keys(byGroup).find((group) => groups.has(group)) : undefined;
    fields[field.name] = match !== undefined && byGroup ? byGroup[match] : (field.default ?? null);
    if (field.name === 'email' && identity.email !== undefined && field.type === 'string') {
      fields.email = identity.email;
    }
  }
  return { isAdmin: sso.adminGroups.some((group) => groups.has(group)), fields };
}

/** SSO_FIELD_MAP must name project fields with values of their type (and enum): checked at start-up. */
export function checkFieldMap(sso: SsoConfig, userFields: UserField[]): string[] {
  const problems: string[] = [];
  const byName = new Map(userFields.map((field) => [field.name, field]));
  for (const [name, groups] of Object.entries(sso.fieldMap)) {
    const field = byName.get(name);
    if (!field) {
      problems.push(`SSO_FIELD_MAP names "${name}", which is not a user field of the project`);
      continue;
    }
    for (const [group, value] of Object.entries(groups)) {
      if (!valueMatchesType(value, field.type) || (field.enum && !field.enum.includes(value))) {
        problems.push(
          `SSO_FIELD_MAP value "${String(value)}" of group "${group}" does not fit user field "${name}"`,
        );
      }
    }
  }
  return problems;
}

/** Splits a groups header: comma-separated, trimmed, empty parts dropped. */
export function splitGroups(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((group) => group.trim())
    .filter((group) => group !== '');
}
