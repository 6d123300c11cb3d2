import type { UserField, UserFieldValue } from '@/core/user-fields';
import type { User } from '@/database/tables/users.entity';

/** A user as the API shows it: `username`, `is_admin`, then the project's fields. Never the password. */
export function toUserJson(
  user: User,
  fields: Record<string, UserFieldValue>,
): Record<string, unknown> {
  return { username: user.username, is_admin: user.isAdmin, ...fields };
}

/** A user-field descriptor of `GET P/user-fields`. */
export function toFieldDescriptor(field: UserField): Record<string, unknown> {
  const descriptor: Record<string, unknown> = {
    name: field.name,
    type: field.type,
    required: field.required,
  };
  if (field.default !== undefined) descriptor.default = field.default;
  if (field.enum) descriptor.enum = field.enum;
  return descriptor;
}

/** `username` and `is_admin` come first, then the project's fields in manifest order. */
export function userFieldDescriptors(fields: UserField[]): Record<string, unknown>[] {
  return [
    { name: 'username', type: 'string', required: true },
    { name: 'is_admin', type: 'boolean', required: false, default: false },
    ...fields.map(toFieldDescriptor),
  ];
}
