/**
 * The rules every input obeys, whichever door it came in by (HTTP of both layouts, MCP over HTTP and
 * stdio, the CLI): text that storage can hold, and bounds on nesting, members and string sizes. Pure: a
 * door parses its input, then asks {@link inputFault} (or {@link isStorableText}) and answers the fault in
 * its own shape. The HTTP middleware (http/input/input-limits.ts) bounds bodies before they are parsed;
 * these bounds are what holds where no middleware runs (stdio, the CLI) and on what a middleware passed.
 */

/**
 * NUL (Postgres text cannot hold it: 22021; DuckDB stops reading SQL at it, so what runs is not what was
 * sent) and UTF-16 halves without their other half (22P05 once encoded, and JSON's `\ud800`). A JS string
 * may hold both; storage and most tools cannot.
 */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/**
 * A copy of a value whose strings storage can hold, each unstorable character replaced by U+FFFD: for what
 * must be written whatever it holds (an audit row recording a refused input).
 */
export function storableCopy<T>(value: T): T {
  if (typeof value === 'string') {
    return (
      isStorableText(value) ? value : value.replace(new RegExp(UNSTORABLE, 'g'), '\uFFFD')
    ) as T;
  }
  if (Array.isArray(value)) return value.map(storableCopy) as T;
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [storableCopy(key), storableCopy(item)]),
    ) as T;
  }
  return value;
}

/** How far a parsed input may go: nesting, members in all (object keys and array items), string sizes. */
export interface InputBounds {
  /** Objects and arrays nested in one another; the value itself is depth 1. */
  depth: number;
  /** Object members and array items, counted over the whole value. */
  members: number;
  /** Characters (UTF-16 units) of any string or object key. */
  textChars: number;
}

/**
 * The deepest nesting a JSON input may have. Every input the interface defines is at most three levels
 * deep (an object of selections, a list of values); code that walks a value recursively overflows the stack
 * past a few thousand levels.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * The bounds of the arguments of one MCP tool call or one CLI command. 100,000 characters is the longest
 * SQL query-models runs (its own bound); 1,000 members is the HTTP door's bound on query parameters, and
 * more than any selection of the project's parameters needs.
 */
export const ARGUMENT_BOUNDS: InputBounds = Object.freeze({
  depth: MAX_JSON_DEPTH,
  members: 1000,
  textChars: 100_000,
});

/** No bound but storable text: what the HTTP door checks of a body its parser already bounded. */
export const STORABLE_ONLY: InputBounds = Object.freeze({
  depth: Infinity,
  members: Infinity,
  textChars: Infinity,
});

/** Why an input is refused: where (`arguments.selections.region[2]`) and what is wrong there. */
export interface InputFault {
  path: string;
  rule: 'unstorable' | 'too_deep' | 'too_many_members' | 'too_long';
  /** A sentence that starts with the path. */
  message: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** The longest key a path quotes: a path is for a person to read, the key may be 100,000 characters. */
const PATH_KEY_CHARS = 64;

/** `path.key`, or `path["odd key"]` for a key that is no identifier (made printable and short). */
export function memberPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (IDENTIFIER.test(key) && key.length <= PATH_KEY_CHARS) return `${path}.${key}`;
  const shown = storableCopy(
    key.length > PATH_KEY_CHARS ? `${key.slice(0, PATH_KEY_CHARS)}…` : key,
  );
  return `${path}[${JSON.stringify(shown)}]`;
}

function fault(path: string, rule: InputFault['rule'], what: string): InputFault {
  return { path, rule, message: `${path} ${what}` };
}

/** A string's fault, or a key's (`key`: the message says the object has a key that breaks the rule). */
function textFault(
  path: string,
  text: string,
  bounds: InputBounds,
  key: boolean,
): InputFault | null {
  if (text.length > bounds.textChars) {
    const what = key ? 'has a key' : 'is';
    return fault(path, 'too_long', `${what} longer than ${bounds.textChars} characters`);
  }
  if (!isStorableText(text)) {
    const what = key ? 'has a key that holds' : 'holds';
    return fault(
      path,
      'unstorable',
      `${what} a NUL character or an unpaired UTF-16 surrogate, which no input may contain`,
    );
  }
  return null;
}

/** An object or array met on the walk, with how it was reached: the path is built only for a fault. */
interface Visit {
  value: object;
  depth: number;
  parent: Visit | null;
  key: string | number | null;
}

function pathOf(visit: Visit | null, root: string, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let at = visit; at !== null && at.key !== null; at = at.parent) keys.push(at.key);
  return keys.reduceRight<string>((path, name) => memberPath(path, name), root);
}

/**
 * The first place where a parsed JSON-like value breaks the rules, named from `root` (`arguments`), or null
 * when it keeps them all. A walk with its own stack: a value nested deeper than the stack can recurse is
 * answered, not crashed on. Stops at the first fault, so a value over the member bound is read no further.
 * Nothing is allocated per string or scalar member (the HTTP door runs this on every body).
 */
export function inputFault(
  value: unknown,
  root: string,
  bounds: InputBounds = ARGUMENT_BOUNDS,
): InputFault | null {
  if (typeof value === 'string') return textFault(root, value, bounds, false);
  if (typeof value !== 'object' || value === null) return null;
  const stack: Visit[] = [{ value, depth: 1, parent: null, key: null }];
  let members = 0;
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if (visit.depth > bounds.depth) {
      return fault(pathOf(visit, root), 'too_deep', `nests deeper than ${bounds.depth} levels`);
    }
    const item = visit.value as Record<string, unknown>;
    const keys: (string | number)[] | null = Array.isArray(item) ? null : Object.keys(item);
    const count = keys === null ? (item as unknown as unknown[]).length : keys.length;
    members += count;
    if (members > bounds.members) {
      return fault(
        pathOf(visit, root),
        'too_many_members',
        `takes the input past ${bounds.members} members (object keys and list items in all)`,
      );
    }
    // Members in order, objects pushed in reverse: the fault named is the first one in reading order.
    const nested: Visit[] = [];
    for (let index = 0; index < count; index++) {
      const key = keys === null ? index : keys[index];
      if (typeof key === 'string' && (key.length > bounds.textChars || !isStorableText(key))) {
        return textFault(pathOf(visit, root), key, bounds, true);
      }
      const member = item[key as string];
      if (typeof member === 'string') {
        if (member.length > bounds.textChars || !isStorableText(member)) {
          return textFault(pathOf(visit, root, key), member, bounds, false);
        }
      } else if (typeof member === 'object' && member !== null) {
        nested.push({ value: member, depth: visit.depth + 1, parent: visit, key });
      }
    }
    for (let index = nested.length - 1; index >= 0; index--) stack.push(nested[index]);
  }
  return null;
}
