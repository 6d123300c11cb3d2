import type { SelectionReading } from '@/core/parameters/selection-request';

/**
 * What the legacy layout reads differently from the current one, for every feature's legacy controller.
 * The 0.4 service's clients write names with hyphens (`group-by`, `dataset/sales-by-month`).
 */

/** The legacy layout accepts hyphens for underscores in dataset, dashboard and parameter names. */
export function hyphensForUnderscores(name: string): string {
  return name.replace(/-/g, '_');
}

/**
 * How the legacy layout reads selections: hyphens for underscores in names (and in `x_parent_param`), and
 * the 0.4 service's lenient value forms (comma-joined lists, JSON-list strings, numbers for ids and texts).
 */
export const LEGACY_SELECTIONS: SelectionReading = {
  forms: 'lenient',
  name: hyphensForUnderscores,
};
