import {
  checkNewPassword,
  generatePassword,
  MAX_PASSWORD_LENGTH,
  passwordProblem,
} from '@/core/users/password-policy';

describe('the password policy', () => {
  it('accepts the minimum and refuses one character less', () => {
    expect(passwordProblem('12345678', 8)).toBeUndefined();
    expect(passwordProblem('1234567', 8)).toBe(
      'must be at least 8 characters long (PASSWORD_MIN_LENGTH)',
    );
    expect(passwordProblem('1', 1)).toBeUndefined();
  });

  it('counts characters, not UTF-16 units', () => {
    // Four emoji are eight UTF-16 units, but four characters.
    expect(passwordProblem('😀😀😀😀', 8)).toMatch(/at least 8/);
    expect(passwordProblem('😀😀😀😀', 4)).toBeUndefined();
  });

  it('refuses more than the maximum', () => {
    expect(passwordProblem('x'.repeat(MAX_PASSWORD_LENGTH), 8)).toBeUndefined();
    expect(passwordProblem('x'.repeat(MAX_PASSWORD_LENGTH + 1), 8)).toMatch(/at most 256/);
  });

  it('throws invalid_password naming the field', () => {
    expect(() => checkNewPassword('short', 8, 'The new password')).toThrow(
      expect.objectContaining({
        code: 'invalid_password',
        message: 'The new password must be at least 8 characters long (PASSWORD_MIN_LENGTH)',
      }),
    );
    expect(() => checkNewPassword('long enough', 8)).not.toThrow();
  });

  it('generates passwords it accepts, different each time', () => {
    for (const min of [1, 8, 16, 17, 128]) {
      const password = generatePassword(min);
      expect(passwordProblem(password, min)).toBeUndefined();
      expect(password).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(password.length).toBe(Math.max(16, min));
    }
    expect(generatePassword(8)).not.toBe(generatePassword(8));
  });
});
