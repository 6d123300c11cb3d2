import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';

/** Requests whose selections are kept per catalog; a full table starts again. */
export const KEPT_SELECTIONS_MAX = 1000;

/**
 * Option values kept at most, over every kept request: a multi-select's default may select thousands of
 * options, each kept with its fields. A request selecting more is evaluated every time; a table that would
 * hold more starts again.
 */
export const KEPT_OPTIONS_MAX = 100_000;

/**
 * Requests whose key (their selections as JSON, with the caller's group values) is longer are evaluated
 * every time: a key is kept with its selections, and any text may be sent as a selection.
 */
export const KEPT_KEY_MAX_CHARS = 2048;

/**
 * The selections a catalog evaluated, by what decides them: the endpoint's parameters, the request's
 * selections and readings, and the caller as the cascade reads it (signed in or not, and the values of the
 * user fields that hide options). Evaluating the same defaults again on every request is a visible share of
 * a cached read's CPU and garbage; a kept entry is a Map lookup (see docs/performance.md, "Figures behind
 * the code", "Kept selections"). Entries are frozen, since every request sharing them holds the same
 * objects. Errors are not kept: a refused request is evaluated again.
 */
export class KeptSelections {
  private readonly kept = new Map<string, SelectionValues>();
  /** Option values in {@link kept}. */
  private options = 0;
  private readonly endpoints = new WeakMap<readonly string[], number>();
  /** Arrays with the same names share a number, so that a copy of a list does not grow the table's keys. */
  private readonly numbers = new Map<string, number>();

  /**
   * @param groupFields the user fields whose values decide which options a caller sees.
   * @param optionsMax see {@link KEPT_OPTIONS_MAX}
   */
  constructor(
    private readonly groupFields: readonly string[],
    private readonly optionsMax = KEPT_OPTIONS_MAX,
  ) {}

  /** The key of a request, or undefined for one too long to keep. */
  keyOf(
    names: readonly string[],
    request: ParameterRequest,
    caller: CallerView,
  ): string | undefined {
    // Endpoints pass the project's own list of names, the same array every time.
    let endpoint = this.endpoints.get(names);
    if (endpoint === undefined) {
      endpoint = this.endpointKey(names);
      this.endpoints.set(names, endpoint);
    }
    // Written out rather than one JSON.stringify of it all, which is slower (docs/performance.md, "Figures
    // behind the code", "Kept selections"); every part a client or a user sets is JSON, so that no text can
    // pass for another part.
    let key = `${endpoint}|${request.forms}|${request.verifyParams ? 1 : 0}`;
    if (request.parentParam !== null) key += `|p${JSON.stringify(request.parentParam)}`;
    if (caller.username === null) key += '|-';
    else {
      // A field the caller lacks differs from one set to null.
      for (const name of this.groupFields) {
        const value = caller.fields[name];
        key += value === undefined ? '|~' : `|${JSON.stringify(value)}`;
      }
    }
    if (request.injected) key += `|i${JSON.stringify([...request.injected])}`;
    if (request.selections.size > 0) key += `|s${JSON.stringify([...request.selections])}`;
    return key.length <= KEPT_KEY_MAX_CHARS ? key : undefined;
  }

  get(key: string | undefined): SelectionValues | undefined {
    return key === undefined ? undefined : this.kept.get(key);
  }

  /**
   * Keeps `selections` under `key` (none when the key was too long or they select more than
   * {@link KEPT_OPTIONS_MAX} options), frozen; returns them.
   */
  keep(key: string | undefined, selections: SelectionValues): SelectionValues {
    deepFreeze(selections);
    const options = optionsIn(selections);
    if (key === undefined || options > this.optionsMax) return selections;
    if (this.kept.size >= KEPT_SELECTIONS_MAX || this.options + options > this.optionsMax) {
      this.kept.clear();
      this.options = 0;
    }
    this.kept.set(key, selections);
    this.options += options;
    return selections;
  }

  private endpointKey(names: readonly string[]): number {
    const text = names.join('\u0000');
    let number = this.numbers.get(text);
    if (number === undefined) {
      number = this.numbers.size;
      this.numbers.set(text, number);
    }
    return number;
  }
}

function optionsIn(selections: SelectionValues): number {
  let count = 0;
  for (const value of Object.values(selections)) {
    if (value.widget === 'multi_select') count += value.selected.length;
    else if (value.widget === 'single_select') count += 1;
  }
  return count;
}

/** Freezes `value` and every object within it (those frozen already are taken as frozen throughout). */
export function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
