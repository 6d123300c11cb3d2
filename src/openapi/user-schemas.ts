import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';
import type { UserField, UserFieldType } from '@/core/user-fields';
import { MAX_PASSWORD_LENGTH } from '@/core/users/password-policy';

type Schema = Record<string, unknown>;

const OPENAPI_TYPE: Record<UserFieldType, string> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
};

function fieldSchema(field: UserField): Schema {
  const schema: Schema = {
    type: OPENAPI_TYPE[field.type],
    description: field.description || undefined,
  };
  if (field.enum) schema.enum = field.enum;
  if (field.default !== undefined) schema.default = field.default;
  return schema;
}

/**
 * OpenAPI schemas of the user bodies, generated from the project's user fields. Other keys are accepted
 * and ignored (clients send their own form state along), so the schemas stay open.
 */
export function userSchemas(fields: UserField[]): Record<string, Schema> {
  const own = Object.fromEntries(fields.map((field) => [field.name, fieldSchema(field)]));
  return {
    NewUser: {
      type: 'object',
      required: [
        'username',
        'password',
        ...fields.filter((f) => f.required && f.default === undefined).map((f) => f.name),
      ],
      properties: {
        username: { type: 'string', pattern: '^[A-Za-z0-9_.@-]{1,64}$' },
        password: { type: 'string', format: 'password', writeOnly: true },
        is_admin: { type: 'boolean', default: false },
        ...own,
      },
    },
    UserUpdate: {
      type: 'object',
      properties: {
        username: {
          type: 'string',
          description: "Accepted only when equal to the path's username; it changes nothing",
        },
        is_admin: { type: 'boolean' },
        ...own,
      },
    },
  };
}

/**
 * The password policy where the document shows a new password: adding a user (`NewUser`) and
 * change-password (`ChangePasswordDto`, whose decorators cannot know PASSWORD_MIN_LENGTH).
 */
export function documentPasswordPolicy(document: OpenAPIObject, minLength: number): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const policy = {
    minLength,
    maxLength: MAX_PASSWORD_LENGTH,
    description: `${minLength} to ${MAX_PASSWORD_LENGTH} characters (PASSWORD_MIN_LENGTH); otherwise 400 \`invalid_password\``,
  };
  for (const [schema, field] of [
    ['NewUser', 'password'],
    ['ChangePasswordDto', 'new_password'],
  ]) {
    const property = schemas[schema]?.properties?.[field] as SchemaObject | undefined;
    if (!property) throw new Error(`The document has no ${schema}.${field} to describe`);
    Object.assign(property, policy);
  }
}

/** OpenAPI schemas of the users as the API answers them, and of the user-field descriptors. */
export function userResponseSchemas(fields: UserField[]): Record<string, Schema> {
  const own = Object.fromEntries(
    fields.map((field) => [
      field.name,
      { ...fieldSchema(field), nullable: field.default === undefined && !field.required },
    ]),
  );
  const value = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] };
  return {
    User: {
      type: 'object',
      description: "A user: `username`, `is_admin`, then the project's user fields",
      required: ['username', 'is_admin', ...fields.map((field) => field.name)],
      properties: { username: { type: 'string' }, is_admin: { type: 'boolean' }, ...own },
    },
    UserFieldDescriptor: {
      type: 'object',
      required: ['name', 'type', 'required'],
      properties: {
        name: { type: 'string' },
        type: { type: 'string', enum: ['string', 'integer', 'number', 'boolean'] },
        required: { type: 'boolean' },
        default: { ...value, nullable: true, description: 'Present when the field has one' },
        enum: { type: 'array', items: value, description: 'Present when the field has one' },
      },
    },
  };
}
