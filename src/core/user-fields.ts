import { didYouMean } from '@/core/did-you-mean';
import { Problems } from '@/core/project-errors';

export type UserFieldType = 'string' | 'integer' | 'number' | 'boolean';
export type UserFieldValue = string | number | boolean | null;

/** A project-defined user attribute (`user_fields` of the manifest). */
export interface UserField {
  name: string;
  type: UserFieldType;
  required: boolean;
  enum?: UserFieldValue[];
  /** Absent when the field has no default. */
  default?: UserFieldValue;
  description: string;
}

const TYPES: UserFieldType[] = ['string', 'integer', 'number', 'boolean'];
const FIELD_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const RESERVED = new Set(['username', 'is_admin', 'password', 'created_at']);

export function valueMatchesType(value: unknown, type: UserFieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

/**
 * Why `value` is not one `field` may hold (its type, its enum; null only when it is not required), as the
 * end of a sentence naming the field; undefined when it may hold it. Users' fields and embedding tokens'
 * attributes are checked by it alike.
 */
export function fieldValueProblem(field: UserField, value: unknown): string | undefined {
  if (value === null) return field.required ? 'is required and cannot be null' : undefined;
  if (!valueMatchesType(value, field.type)) return `must be of type ${field.type}`;
  if (field.enum && !field.enum.includes(value as UserFieldValue)) {
    return `must be one of ${field.enum.map(String).join(', ')}`;
  }
  return undefined;
}

/** Parses `user_fields` of the manifest; problems name the path inside the file. */
export function parseUserFields(raw: unknown, file: string, problems: Problems): UserField[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.add(file, 'user_fields', 'must be a list');
    return [];
  }
  const fields: UserField[] = [];
  const seen = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const at = `user_fields[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.add(file, at, 'must be a mapping with name and type');
      return;
    }
    const item = entry as Record<string, unknown>;
    const known = new Set(['name', 'type', 'required', 'enum', 'default', 'description', 'label']);
    for (const key of Object.keys(item)) {
      if (!known.has(key)) {
        problems.add(file, `${at}.${key}`, `is not a known key${didYouMean(key, known)}`);
      }
    }
    const name = item.name;
    if (typeof name !== 'string' || !FIELD_NAME.test(name)) {
      problems.add(file, `${at}.name`, 'must be a snake_case name');
      return;
    }
    if (RESERVED.has(name)) problems.add(file, `${at}.name`, `"${name}" is reserved`);
    if (seen.has(name)) problems.add(file, `${at}.name`, `"${name}" is defined twice`);
    seen.add(name);
    const type = item.type;
    if (typeof type !== 'string' || !TYPES.includes(type as UserFieldType)) {
      problems.add(file, `${at}.type`, `must be one of ${TYPES.join(', ')}`);
      return;
    }
    const fieldType = type as UserFieldType;
    const required = item.required ?? false;
    if (typeof required !== 'boolean')
      problems.add(file, `${at}.required`, 'must be true or false');
    const description = item.description ?? '';
    if (typeof description !== 'string')
      problems.add(file, `${at}.description`, 'must be a string');
    let values: UserFieldValue[] | undefined;
    if (item.enum !== undefined) {
      if (!Array.isArray(item.enum) || item.enum.length === 0) {
        problems.add(file, `${at}.enum`, 'must be a non-empty list');
      } else {
        values = item.enum as UserFieldValue[];
        values.forEach((value, i) => {
          if (!valueMatchesType(value, fieldType)) {
            problems.add(file, `${at}.enum[${i}]`, `must be of type ${fieldType}`);
          }
        });
      }
    }
    const field: UserField = {
      name,
      type: fieldType,
      required: required === true,
      description: typeof description === 'string' ? description : '',
    };
    if (values) field.enum = values;
    if ('default' in item) {
      const value = item.default as UserFieldValue;
      if (value !== null && !valueMatchesType(value, fieldType)) {
        problems.add(file, `${at}.default`, `must be of type ${fieldType}`);
      } else if (values && value !== null && !values.includes(value)) {
        problems.add(file, `${at}.default`, `must be one of the enum values`);
      }
      field.default = value;
    }
    fields.push(field);
  });
  return fields;
}

/** Stored values with the defaults of fields that have none stored (fields added to the project later). */
export function withFieldDefaults(
  stored: Record<string, UserFieldValue>,
  fields: UserField[],
): Record<string, UserFieldValue> {
  const values: Record<string, UserFieldValue> = {};
  for (const field of fields) {
    if (field.name in stored) values[field.name] = stored[field.name];
    else values[field.name] = field.default ?? null;
  }
  return values;
}
