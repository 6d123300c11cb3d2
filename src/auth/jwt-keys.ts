import { KeyObject, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Secrets } from '@/config/secrets';

/** The key a token is checked with, and until when (ms since the epoch) when it is a previous secret's. */
export interface TokenKey {
  key: KeyObject;
  acceptedUntil?: number;
}

/**
 * The keys Drey's tokens (HS256) are verified with: JWT_SECRET's, and during a rotation the previous
 * secrets' (JWT_PREVIOUS_SECRETS) until JWT_PREVIOUS_SECRETS_UNTIL. Keys are KeyObjects: given a string,
 * jsonwebtoken first tries it as a public key on every verification, which throws, at a cost on every
 * request (see docs/performance.md, "Figures behind the code", "JWT keys as KeyObjects").
 */
export class JwtKeys {
  readonly current: KeyObject;
  private readonly previous: KeyObject[];
  private readonly until: number;

  constructor(
    secrets: Pick<Secrets, 'jwtSecret' | 'previousJwtSecrets'>,
    private readonly now: () => number = Date.now,
  ) {
    this.current = keyOf(secrets.jwtSecret);
    this.previous = (secrets.previousJwtSecrets?.secrets ?? []).map(keyOf);
    this.until = secrets.previousJwtSecrets?.until.getTime() ?? 0;
  }

  /**
   * The key that signed `token` among those accepted now. Outside a rotation, or when no key matches, the
   * current one: jsonwebtoken then checks it as always (and refuses a bad signature, a wrong algorithm or a
   * malformed token). During one, the signature is computed with each key until one matches, once per
   * token: JwtStrategy remembers tokens it has checked (the cost: docs/performance.md, "Figures behind the
   * code", "JWT keys during a rotation").
   */
  keyFor(token: string): TokenKey {
    if (this.previous.length === 0 || this.now() >= this.until) return { key: this.current };
    const dot = token.lastIndexOf('.');
    if (dot < 0) return { key: this.current };
    const signed = token.slice(0, dot);
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    const signs = (key: KeyObject) => {
      const expected = createHmac('sha256', key).update(signed).digest();
      return expected.length === signature.length && timingSafeEqual(expected, signature);
    };
    if (signs(this.current)) return { key: this.current };
    const previous = this.previous.find(signs);
    return previous ? { key: previous, acceptedUntil: this.until } : { key: this.current };
  }
}

function keyOf(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}
