import { randomBytes } from 'node:crypto';
import { DomainError } from '@/core/errors';

/**
 * The one password policy, applied wherever a password is set: adding a user and change-password (API),
 * `drey users add` and `reset-password`, ADMIN_PASSWORD and a generated admin password. Only a length,
 * as NIST SP 800-63B advises (no composition rules); the minimum is PASSWORD_MIN_LENGTH.
 */

/** Longer passwords are refused: argon2 hashes any length, but a bound keeps a body from making it work. */
export const MAX_PASSWORD_LENGTH = 256;

/** What PASSWORD_MIN_LENGTH may be; a generated password is never shorter than 16 characters. */
export const PASSWORD_MIN_LENGTH = { default: 8, lowest: 1, highest: 128 } as const;

/** A new password the policy refuses: 400 `invalid_password`, the code of every password problem. */
export class InvalidPasswordError extends DomainError {
  constructor(message: string) {
    super('invalid_password', message);
  }
}

/** Why the policy refuses `password` as a new password, or undefined when it accepts it. */
export function passwordProblem(password: string, minLength: number): string | undefined {
  // Characters as a person counts them (code points), not UTF-16 units.
  const length = [...password].length;
  if (length < minLength) {
    return `must be at least ${minLength} characters long (PASSWORD_MIN_LENGTH)`;
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return `must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  }
  return undefined;
}

/** Throws {@link InvalidPasswordError} naming `what` ("The new password") when the policy refuses it. */
export function checkNewPassword(password: string, minLength: number, what = 'The password'): void {
  const problem = passwordProblem(password, minLength);
  if (problem) throw new InvalidPasswordError(`${what} ${problem}`);
}

/** A random password the policy accepts: 16 URL-safe characters (96 bits), or the minimum if longer. */
export function generatePassword(minLength: number): string {
  const length = Math.max(16, minLength);
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length);
}
