import { InvalidRequestError } from '@/core/errors';
import { InvalidSelectionError } from '@/core/parameters/parameter-errors';

/**
 * A parameters, results or query-models request as the parameters domain reads it. Selections stay raw: what
 * a value means depends on the widget type (a comma may be a list separator or part of a text), which the
 * catalog knows and the request parser does not.
 */

export type Layout = 'current' | 'legacy';

/** A query string gives every value as text, possibly repeated; a JSON body gives any JSON value. */
export type RawSelection =
  { source: 'query'; values: string[] } | { source: 'body'; value: unknown };

export interface ParameterRequest {
  layout: Layout;
  /** By parameter name (legacy hyphens already turned into underscores); built-ins are not in here. */
  selections: ReadonlyMap<string, RawSelection>;
  /** `x_verify_params`: unknown names and values for disabled parameters become errors. */
  verifyParams: boolean;
  /** `x_parent_param`: the parameter whose change triggered a refresh. */
  parentParam: string | null;
  /** Every other `x_*` key, as received (query: string or string[]; body: JSON), for the endpoint to read. */
  builtins: Record<string, unknown>;
}

export function emptyParameterRequest(layout: Layout = 'current'): ParameterRequest {
  return { layout, selections: new Map(), verifyParams: false, parentParam: null, builtins: {} };
}

/** GET: `name=value`, a name repeated once per value. */
export function parseQuerySelections(
  query: Record<string, string | string[] | undefined>,
  layout: Layout,
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
  return build(entries, layout, (value) => ({
    source: 'query',
    values: Array.isArray(value) ? (value as string[]) : [value as string],
  }));
}

/** POST: a JSON object, key the parameter name, value the selection. A null value selects nothing. */
export function parseBodySelections(body: unknown, layout: Layout): ParameterRequest {
  if (body === undefined || body === null) return emptyParameterRequest(layout);
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object of parameter selections');
  }
  const entries = Object.entries(body as Record<string, unknown>).filter(
    ([, value]) => value !== null,
  );
  return build(entries, layout, (value) => ({ source: 'body', value }));
}

/** How many of the endpoint's own parameters were given. */
export function countOwnSelections(request: ParameterRequest, names: readonly string[]): number {
  return names.filter((name) => request.selections.has(name)).length;
}

/** The legacy parameters endpoints take at most one selection. */
export function checkLegacySelectionCount(
  request: ParameterRequest,
  names: readonly string[],
): void {
  const given = names.filter((name) => request.selections.has(name));
  if (given.length > 1) {
    throw new InvalidSelectionError(
      `A parameters request takes at most one parameter selection; got ${given.length} (${given.join(', ')})`,
    );
  }
}

function build(
  entries: [string, unknown][],
  layout: Layout,
  raw: (value: unknown) => RawSelection,
): ParameterRequest {
  const selections = new Map<string, RawSelection>();
  const builtins: Record<string, unknown> = {};
  const seenAs = new Map<string, string>();
  let verifyParams = false;
  let parentParam: string | null = null;
  for (const [key, value] of entries) {
    // The legacy layout lets clients write parameter names with hyphens (`group-by`).
    const name = layout === 'legacy' ? key.replace(/-/g, '_') : key;
    const earlier = seenAs.get(name);
    if (earlier !== undefined) {
      throw new InvalidSelectionError(
        `Parameter "${name}" is given twice (as "${earlier}" and "${key}")`,
      );
    }
    seenAs.set(name, key);
    if (name === 'x_verify_params') verifyParams = readFlag(value);
    else if (name === 'x_parent_param') parentParam = readParentParam(value, layout);
    else if (name.startsWith('x_')) builtins[name] = value;
    else selections.set(name, raw(value));
  }
  return { layout, selections, verifyParams, parentParam, builtins };
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

function readParentParam(raw: unknown, layout: Layout): string | null {
  const value = single(raw);
  if (typeof value !== 'string') {
    throw new InvalidRequestError('x_parent_param must be one parameter name');
  }
  if (value === '') return null;
  return layout === 'legacy' ? value.replace(/-/g, '_') : value;
}
