/**
 * What a parameter's selection is once validated: the contract between the parameters domain (which produces
 * it from a request) and the engine (which exposes it to SQL templates, as bound values only).
 */

/** A selected option: its id, label and the project-defined custom fields of the option. */
export interface OptionValue {
  id: string;
  label: string;
  /** Custom fields written in the project (trusted: the project, not the request, defines them). */
  fields: Record<string, unknown>;
}

export type SelectionValue =
  | { widget: 'single_select'; selected: OptionValue | null }
  /** Empty when nothing is selected. */
  | { widget: 'multi_select'; selected: OptionValue[] }
  /** `YYYY-MM-DD`. */
  | { widget: 'date'; date: string }
  | { widget: 'date_range'; start: string; end: string }
  /** Decimal numbers as exact decimal strings (`"0.3"`, not `0.30000000000000004`). */
  | { widget: 'number'; value: string }
  | { widget: 'number_range'; lower: string; upper: string }
  | { widget: 'text'; text: string }
  | { widget: 'disabled' };

/** Selections by parameter name, for the parameters a dataset or dashboard declares. */
export type SelectionValues = Record<string, SelectionValue>;

/** The caller as the parameters and the models see it. */
export interface CallerView {
  /** Null for an anonymous caller. */
  username: string | null;
  isAdmin: boolean;
  /** Project-defined user fields (with defaults applied); empty for anonymous callers. */
  fields: Record<string, string | number | boolean | null>;
}
