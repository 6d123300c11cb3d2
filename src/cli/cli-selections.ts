import { parseQuerySelections, ParameterRequest } from '@/core/parameters/selection-request';
import type { Project } from '@/core/project/project';

/** `a..b` or `a,b`. */
function pair(text: string): [string, string] {
  const [low = '', high = ''] = text.includes('..') ? text.split('..') : text.split(',');
  return [low.trim(), high.trim()];
}

/**
 * A `--param name=value` text as the values of a query string: the service's own request, so that
 * `compile` validates, applies defaults and cascades exactly as the results endpoints do. Shorthands:
 * several option ids of a `multi_select` comma-separated, a range as `low..high` (or `low,high`); an empty
 * multi-select value selects nothing.
 */
function queryValues(project: Project, name: string, text: string): string[] {
  const definition = project.parameters.find((candidate) => candidate.name === name);
  const widget = definition?.widget;
  if (widget === 'multi_select') {
    return text
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== '');
  }
  if (widget === 'date_range' || widget === 'number_range') return pair(text);
  return [text];
}

/**
 * The request `compile` renders: the given values of the dataset's parameters; the others take their
 * defaults. A name that is not a parameter of the dataset is refused, as a likely typo.
 */
export function requestFromCli(
  project: Project,
  parameters: readonly string[],
  given: Readonly<Record<string, string>>,
): ParameterRequest {
  const unknown = Object.keys(given).filter((name) => !parameters.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `not a parameter of this dataset: ${unknown.join(', ')} (it takes: ${parameters.join(', ')})`,
    );
  }
  const query: Record<string, string[]> = {};
  for (const [name, text] of Object.entries(given)) {
    query[name] = queryValues(project, name, text);
  }
  return parseQuerySelections(query);
}
