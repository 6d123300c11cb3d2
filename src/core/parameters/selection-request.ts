import { InvalidRequestError } from '@/core/errors';
import { InvalidSelectionError } from '@/core/parameters/parameter-errors';

/**
 * A parameters, results or query-models request as the parameters domain reads it. Selections stay raw: what
 * a value means depends on the widget type (a comma may be a list separator or part of a text), which the
 * catalog knows and the request parser does not.
 */

/**
 * Which forms a selection's value may take (section 4.4): `strict` takes those of the interface only;
 * `lenient` also takes comma-joined lists, JSON-list strings and numbers for ids and texts, as clients of
 * the 0.4 service send them.
 */
export type SelectionForms = 'strict' | 'lenient';

/** How an endpoint reads its selections: the forms their values may take, and how a name as sent is read. */
export interface SelectionReading {
  forms: SelectionForms;
  /** Gives the configured parameter name for a name as sent (keys and the value of `x_parent_param`). */
  name: (sent: string) => string;
}

/** Names as sent, values in the forms of the interface only. */
export const STRICT_READING: SelectionReading = { forms: 'strict', name: (sent) => sent };

/** A query as Express' simple parser gives it: a repeated name becomes an array. */
export type RawQuery = Record<string, string | string[] | undefined>;

/** A query string gives every value as text, possibly repeated; a JSON body gives any JSON value. */
export type RawSelection =
  { source: 'query'; values: string[] } | { source: 'body'; value: unknown };

export interface ParameterRequest {
  /** The forms the selections' values may take, from the endpoint's {@link SelectionReading}. */
  forms: SelectionForms;
  /** By parameter name (as the endpoint's reading gives it); built-ins are not in here. */
  selections: ReadonlyMap<string, RawSelection>;
  /** `x_verify_params`: unknown names and values for disabled parameters become errors. */
  verifyParams: boolean;
  /** `x_parent_param`: the parameter whose change triggered a refresh. */
  parentParam: string | null;
  /** Every other `x_*` key, as received (query: string or string[]; body: JSON), for the endpoint to read. */
  builtins: Record<string, unknown>;
  /**
   * Selections the client did not send (an embedding token's locked values and defaults): they apply, but
   * do not make a parameters request a refresh of one parameter's children.
   */
  injected?: ReadonlySet<string>;
}

export function emptyParameterRequest(forms: SelectionForms = 'strict'): ParameterRequest {
  return { forms, selections: new Map(), verifyParams: false, parentParam: null, builtins: {} };
}

/** GET: `name=value`, a name repeated once per value. */
export function parseQuerySelections(
  query: RawQuery,
  reading: SelectionReading = STRICT_READING,
): ParameterRequest {
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (!values.every((v) => typeof v === 'string')) {
      throw new InvalidRequestError(`Query parameter "${key}" must be plain text`);
    }
    entries.push([key, value]);
  }
  return build(entries, reading, (value) => ({
    source: 'query',
    values: Array.isArray(value) ? (value as string[]) : [value as string],
  }));
}

/** POST: a JSON object, key the parameter name, value the selection. A null value selects nothing. */
export function parseBodySelections(
  body: unknown,
  reading: SelectionReading = STRICT_READING,
): ParameterRequest {
  if (body === undefined || body === null) return emptyParameterRequest(reading.forms);
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object of parameter selections');
  }
  const entries = Object.entries(body as Record<string, unknown>).filter(
    ([, value]) => value !== null,
  );
  if (reading.forms === 'strict') checkJsonBuiltins(Object.fromEntries(entries));
  return build(entries, reading, (value) => ({ source: 'body', value }));
}

/**
 * The JSON types of the `x_` built-ins in a body of the current layout, as the document states them: on POST
 * `x_select` is a JSON array of names (a string was taken as one column), `x_limit` and `x_offset` JSON
 * integers, `x_orientation` and `x_parent_param` strings, `x_verify_params` a boolean. The legacy layout keeps
 * its 0.4 leniency (its bodies go through {@link LEGACY_SELECTIONS}' lenient forms, not here).
 */
export function checkJsonBuiltins(builtins: Record<string, unknown>): void {
  const wrong = (name: string, what: string) =>
    new InvalidRequestError(`${name} must be ${what} in a JSON body`);
  const { x_select, x_limit, x_offset, x_orientation, x_parent_param, x_verify_params } = builtins;
  if (
    x_select !== undefined &&
    x_select !== null &&
    !(Array.isArray(x_select) && x_select.every((item) => typeof item === 'string'))
  ) {
    throw wrong('x_select', 'an array of column names');
  }
  for (const [name, value] of [
    ['x_limit', x_limit],
    ['x_offset', x_offset],
  ] as const) {
    if (value !== undefined && value !== null && !Number.isInteger(value)) {
      throw wrong(name, 'a whole number');
    }
  }
  for (const [name, value] of [
    ['x_orientation', x_orientation],
    ['x_parent_param', x_parent_param],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw wrong(name, 'a string');
    }
  }
  if (
    x_verify_params !== undefined &&
    x_verify_params !== null &&
    typeof x_verify_params !== 'boolean'
  ) {
    throw wrong('x_verify_params', 'true or false');
  }
}

/** How many of the endpoint's own parameters were given. */
export function countOwnSelections(request: ParameterRequest, names: readonly string[]): number {
  return names.filter((name) => request.selections.has(name)).length;
}

/** For endpoints that take at most one of their own parameters' selections. */
export function checkAtMostOneSelection(request: ParameterRequest, names: readonly string[]): void {
  const given = names.filter((name) => request.selections.has(name));
  if (given.length > 1) {
    throw new InvalidSelectionError(
      `A parameters request takes at most one parameter selection; got ${given.length} (${given.join(', ')})`,
    );
  }
}

function build(
  entries: [string, unknown][],
  reading: SelectionReading,
  raw: (value: unknown) => RawSelection,
): ParameterRequest {
  const selections = new Map<string, RawSelection>();
  const builtins: Record<string, unknown> = {};
  const seenAs = new Map<string, string>();
  let verifyParams = false;
  let parentParam: string | null = null;
  for (const [key, value] of entries) {
    const name = reading.name(key);
    const earlier = seenAs.get(name);
    if (earlier !== undefined) {
      throw new InvalidSelectionError(
        `Parameter "${name}" is given twice (as "${earlier}" and "${key}")`,
      );
    }
    seenAs.set(name, key);
    if (name === 'x_verify_params') verifyParams = readFlag(value);
    else if (name === 'x_parent_param') parentParam = readParentParam(value, reading);
    else if (name.startsWith('x_')) builtins[name] = value;
    else selections.set(name, raw(value));
  }
  return { forms: reading.forms, selections, verifyParams, parentParam, builtins };
}

/** A query parameter given once, or any JSON value. */
function single(value: unknown): unknown {
  if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string') return value[0];
  return value;
}

function readFlag(raw: unknown): boolean {
  const value = single(raw);
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string' && /^(true|false|1|0)$/i.test(value)) {
    return /^(true|1)$/i.test(value);
  }
  throw new InvalidRequestError('x_verify_params must be true or false');
}

function readParentParam(raw: unknown, reading: SelectionReading): string | null {
  const value = single(raw);
  if (typeof value !== 'string') {
    throw new InvalidRequestError('x_parent_param must be one parameter name');
  }
  // An empty value is no trigger in the legacy layout (as the 0.4 service read it); the current layout's
  // document lists the endpoint's parameter names as its only values.
  if (value === '') {
    if (reading.forms === 'strict') {
      throw new InvalidRequestError('x_parent_param must name a parameter of the endpoint');
    }
    return null;
  }
  return reading.name(value);
}
