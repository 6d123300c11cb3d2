/**
 * An Arrow Decimal's exact digits at its scale. apache-arrow gives a decimal's value as its 32-bit words,
 * least significant first (and its own toString misreads a Decimal256's), so they are read here as one
 * two's complement integer.
 */
export function decimalText(words: Uint32Array, scale: number): string {
  let value = 0n;
  for (let index = words.length - 1; index >= 0; index--)
    value = (value << 32n) | BigInt(words[index]);
  const bits = BigInt(words.length * 32);
  if (value >> (bits - 1n)) value -= 1n << bits;
  const digits = (value < 0n ? -value : value).toString().padStart(scale + 1, '0');
  const sign = value < 0n ? '-' : '';
  return scale === 0 ? sign + digits : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
