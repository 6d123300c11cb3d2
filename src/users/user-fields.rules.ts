import { DomainError } from '@/core/errors';
import {
  fieldValueProblem,
  UserField,
  UserFieldValue,
  withFieldDefaults,
} from '@/core/user-fields';

/** Rules for user input against the project's user fields: pure, so they are unit-tested alone. */

export class InvalidUserError extends DomainError {
  constructor(message: string) {
    super('invalid_user', message);
  }
}

export interface NewUser {
  username: string;
  password: string;
  isAdmin: boolean;
  fields: Record<string, UserFieldValue>;
}

export interface UserUpdate {
  isAdmin?: boolean;
  fields: Record<string, UserFieldValue>;
}

export const USERNAME = /^[A-Za-z0-9_.@-]{1,64}$/;

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidUserError('The body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function checkValue(field: UserField, value: unknown): UserFieldValue {
  const problem = fieldValueProblem(field, value);
  if (problem) throw new InvalidUserError(`Field "${field.name}" ${problem}`);
  return value as UserFieldValue;
}

/**
 * The project fields' values among what is sent. Keys that are not user fields are ignored, as the b-era
 * service did: real clients send their own form state with the user (`__prev__username`).
 */
function checkProjectFields(
  input: Record<string, unknown>,
  fields: UserField[],
): Record<string, UserFieldValue> {
  const values: Record<string, UserFieldValue> = {};
  for (const field of fields) {
    if (field.name in input) values[field.name] = checkValue(field, input[field.name]);
  }
  return values;
}

function checkIsAdmin(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new InvalidUserError('Field "is_admin" must be a boolean');
  return value;
}

/** A new user from `POST P/users`: required fields present, types and enums respected, defaults applied. */
export function parseNewUser(body: unknown, fields: UserField[]): NewUser {
  const input = asObject(body);
  const { username, password } = input;
  if (typeof username !== 'string' || username === '') {
    throw new InvalidUserError('Field "username" is required');
  }
  if (!USERNAME.test(username)) {
    throw new InvalidUserError(
      'Field "username" must be 1-64 letters, digits, "_", ".", "@" or "-"',
    );
  }
  // Its length is the password policy's (core/users/password-policy.ts), which the service applies.
  if (typeof password !== 'string' || password === '') {
    throw new InvalidUserError('Field "password" is required');
  }
  const values = checkProjectFields(input, fields);
  for (const field of fields) {
    if (field.name in values) continue;
    if (field.required && field.default === undefined) {
      throw new InvalidUserError(`Field "${field.name}" is required`);
    }
  }
  return {
    username,
    password,
    isAdmin: checkIsAdmin(input.is_admin) ?? false,
    fields: withFieldDefaults(values, fields),
  };
}

/**
 * A change from `PUT P/users/{username}`: only what is sent. The username cannot change here (one equal to
 * the path's is accepted and changes nothing), nor the password.
 */
export function parseUserUpdate(body: unknown, fields: UserField[], username: string): UserUpdate {
  const input = asObject(body);
  if ('username' in input && input.username !== username) {
    throw new InvalidUserError('A username cannot be changed');
  }
  if ('password' in input) {
    throw new InvalidUserError('A password changes only through the change-password endpoint');
  }
  return {
    isAdmin: checkIsAdmin(input.is_admin),
    fields: checkProjectFields(input, fields),
  };
}

// The rule itself is the core's: embedding tokens' attributes (core/embedding/embed-caller.ts) follow it too.
export { withFieldDefaults };
