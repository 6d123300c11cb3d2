import { MAX_JSON_DEPTH } from '@/core/input-rules';

/** The bound is the core's (every door's); this file applies it to a JSON body before it is parsed. */
export { MAX_JSON_DEPTH };

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when the JSON text nests objects and arrays deeper than `max`. One pass over the bytes without
 * recursion; brackets inside strings do not count. The text need not be valid JSON: the parser judges that.
 */
export function jsonNestsDeeperThan(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** The `type` of the parser error {@link refuseDeepJson} raises, as Express' body parsers name theirs. */
export const JSON_TOO_DEEP = 'entity.too.deep';

/**
 * A `verify` hook for `express.json`: refuses a body nested deeper than {@link MAX_JSON_DEPTH} before it is
 * parsed, with an error shaped like the parser's own (a 400 the error mapping names).
 */
export function refuseDeepJson(_request: unknown, _response: unknown, body: Buffer): void {
  if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw Object.assign(new Error('request body nests too deep'), {
      status: 400,
      expose: true,
      type: JSON_TOO_DEEP,
    });
  }
}
