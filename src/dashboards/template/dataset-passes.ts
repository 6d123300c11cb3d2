import type { TemplateDataset } from '@/dashboards/template/helper-input';
import { isRecord } from '@/dashboards/template/helper-input';

/** One `dataset(name, fixed)` call of a template. */
export interface DatasetCall {
  /** The dataset and its fixed selections, as one string: equal calls are run once. */
  key: string;
  dataset: string;
  /** Selections the template fixes, by parameter name, in the shape of a POST body's values. */
  fixed: Record<string, unknown>;
}

/** `dataset()` as templates call it. */
export type DatasetFunction = (name: unknown, fixed?: unknown) => TemplateDataset;

/** A template's call of `dataset()` that cannot be run, whatever the data: the template is wrong. */
export class DatasetCallError extends Error {}

export interface PassLimits {
  /** Renderings before giving up: a template whose calls depend on earlier calls' results needs more. */
  passes: number;
  /** Distinct calls in one page, so that a loop cannot start thousands of queries. */
  calls: number;
}

const DEFAULT_LIMITS: PassLimits = { passes: 5, calls: 50 };

/** A stable key: `{a:1,b:2}` and `{b:2,a:1}` are the same call. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => key !== '__keywords')
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${stableJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function callOf(name: unknown, fixed: unknown): DatasetCall {
  if (typeof name !== 'string' || name === '') {
    throw new DatasetCallError('dataset(): the first argument must be a dataset name');
  }
  if (fixed !== undefined && fixed !== null && !isRecord(fixed)) {
    throw new DatasetCallError(
      `dataset("${name}", ...): fixed selections must be an object of parameter name to value`,
    );
  }
  const selections: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fixed ?? {})) {
    if (key !== '__keywords') selections[key] = value;
  }
  return { key: `${name}\u0000${stableJson(selections)}`, dataset: name, fixed: selections };
}

/** Nunjucks and the page renderer wrap what a template function throws, keeping it as `cause`. */
function isCallError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    if (e instanceof DatasetCallError) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Renders a template whose `dataset()` calls need data that only an asynchronous query can give, with a
 * synchronous template engine: render once with empty results while noting the calls, run them, render
 * again with their results; repeat while a rendering makes new calls (a call inside `{% if rows %}` shows
 * up only once `rows` has data). The last rendering, which made no new call, is the page. `check` rejects
 * a call that cannot be run whatever the data (unknown dataset or parameter) by throwing DatasetCallError.
 */
export async function renderWithDatasets(
  render: (dataset: DatasetFunction) => string,
  run: (calls: DatasetCall[]) => Promise<TemplateDataset[]>,
  options: { check?: (call: DatasetCall) => void; limits?: PassLimits } = {},
): Promise<string> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const known = new Map<string, TemplateDataset>();
  for (let pass = 1; ; pass++) {
    const missing = new Map<string, DatasetCall>();
    const dataset: DatasetFunction = (name, fixed) => {
      const call = callOf(name, fixed);
      const found = known.get(call.key);
      if (found) return found;
      // Checked while rendering, so that the error names the template's line.
      options.check?.(call);
      missing.set(call.key, call);
      return { rows: [], columns: [], truncated: false };
    };
    let html: string | undefined;
    let failure: Error | undefined;
    try {
      html = render(dataset);
    } catch (error) {
      // Empty placeholder results can make a template fail (dividing by a first row's value); the real
      // results may not. A failure with nothing new to fetch is the template's own.
      if (missing.size === 0 || isCallError(error)) throw error;
      failure = error instanceof Error ? error : new Error(String(error));
    }
    if (missing.size === 0 && html !== undefined) return html;
    if (pass >= limits.passes) {
      throw (
        failure ??
        new DatasetCallError(
          `dataset() calls still depend on earlier results after ${limits.passes} renderings`,
        )
      );
    }
    if (known.size + missing.size > limits.calls) {
      throw new DatasetCallError(`a page may read at most ${limits.calls} datasets`);
    }
    const calls = [...missing.values()];
    const results = await run(calls);
    calls.forEach((call, index) => known.set(call.key, results[index]));
  }
}
