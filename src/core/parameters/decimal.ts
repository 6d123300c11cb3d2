/**
 * Exact decimal numbers for parameter bounds, increments and selections. Binary floating point cannot say
 * whether 0.3 is 0.1 plus a multiple of 0.1, so values are kept as a BigInt scaled by a power of ten.
 */

/** Guards BigInt sizes: a request could otherwise send `1e999999999` and stall the process. */
const MAX_DIGITS = 60;
const PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export class Decimal {
  /** The value is `units / 10^scale`; always normalised (no trailing zero in `units` while `scale > 0`). */
  private constructor(
    private readonly units: bigint,
    private readonly scale: number,
  ) {}

  /** `12`, `-0.5`, `.5`, `1e-7`; null for anything else (no spaces, no `Infinity`, no hex). */
  static parse(text: string): Decimal | null {
    const match = PATTERN.exec(text);
    if (!match) return null;
    const [, sign, whole, fraction = '', exponentText] = match;
    if (whole === '' && fraction === '') return null;
    const exponent = exponentText === undefined ? 0 : Number(exponentText);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_DIGITS * 2) return null;
    const significantFraction = fraction.replace(/0+$/, '');
    const digits = (whole + significantFraction).replace(/^0+/, '');
    if (digits === '') return new Decimal(0n, 0);
    const scale = significantFraction.length - exponent;
    if (digits.length > MAX_DIGITS || scale > MAX_DIGITS || digits.length - scale > MAX_DIGITS) {
      return null;
    }
    const magnitude = BigInt(digits);
    const units = sign === '-' ? -magnitude : magnitude;
    return scale < 0 ? Decimal.of(units * 10n ** BigInt(-scale), 0) : Decimal.of(units, scale);
  }

  /** Through the number's shortest round-trip text, so `0.1` is exactly one tenth. */
  static fromNumber(value: number): Decimal | null {
    return Number.isFinite(value) ? Decimal.parse(String(value)) : null;
  }

  /** A number, a bigint or a string holding a decimal number (as YAML, JSON and query rows give them). */
  static from(value: unknown): Decimal | null {
    if (typeof value === 'number') return Decimal.fromNumber(value);
    if (typeof value === 'bigint') return Decimal.parse(value.toString());
    if (typeof value === 'string') return Decimal.parse(value);
    return null;
  }

  static integer(value: number): Decimal {
    return Decimal.of(BigInt(value), 0);
  }

  private static of(units: bigint, scale: number): Decimal {
    let u = units;
    let s = scale;
    while (s > 0 && u % 10n === 0n) {
      u /= 10n;
      s -= 1;
    }
    return new Decimal(u, s);
  }

  /** Both values over the same power of ten. */
  private aligned(other: Decimal): [bigint, bigint, number] {
    const scale = Math.max(this.scale, other.scale);
    return [
      this.units * 10n ** BigInt(scale - this.scale),
      other.units * 10n ** BigInt(scale - other.scale),
      scale,
    ];
  }

  compare(other: Decimal): -1 | 0 | 1 {
    const [a, b] = this.aligned(other);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  equals(other: Decimal): boolean {
    return this.compare(other) === 0;
  }

  add(other: Decimal): Decimal {
    const [a, b, scale] = this.aligned(other);
    return Decimal.of(a + b, scale);
  }

  subtract(other: Decimal): Decimal {
    const [a, b, scale] = this.aligned(other);
    return Decimal.of(a - b, scale);
  }

  times(factor: bigint): Decimal {
    return Decimal.of(this.units * factor, this.scale);
  }

  /** Whether this value is a whole multiple of `step` (which must not be zero). */
  isMultipleOf(step: Decimal): boolean {
    const [a, b] = this.aligned(step);
    return b !== 0n && a % b === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.units < 0n ? -1 : this.units > 0n ? 1 : 0;
  }

  /** Whether a JSON number carries this value exactly (at most about 15 significant digits). */
  isExactAsNumber(): boolean {
    const back = Decimal.fromNumber(this.toNumber());
    return back !== null && back.equals(this);
  }

  toNumber(): number {
    return Number(this.toString());
  }

  /** The shortest exact text, without exponent: `0.3`, `-12.05`, `1000`. */
  toString(): string {
    const negative = this.units < 0n;
    const digits = (negative ? -this.units : this.units).toString();
    if (this.scale === 0) return `${negative ? '-' : ''}${digits}`;
    const padded = digits.padStart(this.scale + 1, '0');
    const point = padded.length - this.scale;
    return `${negative ? '-' : ''}${padded.slice(0, point)}.${padded.slice(point)}`;
  }

  toJSON(): string {
    return this.toString();
  }
}
