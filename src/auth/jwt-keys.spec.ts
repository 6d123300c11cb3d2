import { createHmac } from 'node:crypto';
import { JwtKeys } from '@/auth/jwt-keys';

const CURRENT = 'the-current-secret-0123456789abcdef';
const OLD = 'an-older-secret-0123456789abcdefghij';
const OLDER = 'the-oldest-secret-0123456789abcdefgh';
const UNTIL = Date.parse('2026-12-01T12:00:00Z');

/** An HS256 token signed with `secret` (the claims do not matter to the key's choice). */
function tokenOf(secret: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'ada' })}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

function secretOf(key: { export(): Buffer }): string {
  return key.export().toString('utf8');
}

describe('JwtKeys', () => {
  const rotating = (now: number) =>
    new JwtKeys(
      { jwtSecret: CURRENT, previousJwtSecrets: { secrets: [OLD, OLDER], until: new Date(UNTIL) } },
      () => now,
    );

  it('checks every token with the current key outside a rotation', () => {
    const keys = new JwtKeys({ jwtSecret: CURRENT });
    for (const secret of [CURRENT, OLD]) {
      const { key, acceptedUntil } = keys.keyFor(tokenOf(secret));
      expect(secretOf(key)).toBe(CURRENT);
      expect(acceptedUntil).toBeUndefined();
    }
  });

  it('picks the previous key that signed a token, until the rotation ends', () => {
    const keys = rotating(UNTIL - 1);
    expect(keys.keyFor(tokenOf(CURRENT))).toEqual({ key: keys.current });
    for (const secret of [OLD, OLDER]) {
      const { key, acceptedUntil } = keys.keyFor(tokenOf(secret));
      expect(secretOf(key)).toBe(secret);
      expect(acceptedUntil).toBe(UNTIL);
    }
  });

  it('leaves the current key for a token no key signed, or that is not a token', () => {
    const keys = rotating(UNTIL - 1);
    for (const token of [tokenOf('someone-else-s-secret-0123456789abc'), 'not a token', 'a.b.']) {
      expect(keys.keyFor(token)).toEqual({ key: keys.current });
    }
  });

  it('accepts no previous key from the rotation’s end on', () => {
    const keys = rotating(UNTIL);
    expect(secretOf(keys.keyFor(tokenOf(OLD)).key)).toBe(CURRENT);
  });
});
