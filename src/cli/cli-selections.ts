import type { OptionValue, SelectionValue, SelectionValues } from '@/parameters/selection-value';
import type { Project } from '@/project/project';

/**
 * Turns `--param name=value` texts into selections, as written: no defaults, no bounds, no cascading, no
 * user groups. That is the parameters domain's job; until the CLI calls it, a value the service would refuse
 * still compiles here, and a bad date or number fails when the template binds it.
 */

/** Keys of a written option that are not custom fields. */
const OPTION_KEYS = new Set([
  'id',
  'label',
  'user_groups',
  'user_group',
  'parent_option_ids',
  'is_default',
]);

type RawDefinition = { name?: unknown; widget?: unknown; options?: unknown };

function definitionOf(project: Project, name: string): RawDefinition | undefined {
  return project.parameterDefinitions.find(
    (definition): definition is RawDefinition =>
      typeof definition === 'object' &&
      definition !== null &&
      (definition as RawDefinition).name === name,
  );
}

/** The option as written in project.yml (for its label and custom fields), or a bare one. */
function optionOf(definition: RawDefinition, id: string): OptionValue {
  const written = Array.isArray(definition.options)
    ? (definition.options as Record<string, unknown>[]).find((option) => String(option?.id) === id)
    : undefined;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(written ?? {})) {
    if (!OPTION_KEYS.has(key)) fields[key] = value;
  }
  return { id, label: typeof written?.label === 'string' ? written.label : id, fields };
}

/** `a..b` or `a,b`. */
function pair(text: string): [string, string] {
  const [low = '', high = ''] = text.includes('..') ? text.split('..') : text.split(',');
  return [low.trim(), high.trim()];
}

function selectionOf(definition: RawDefinition, text: string): SelectionValue {
  switch (definition.widget) {
    case 'single_select':
      return { widget: 'single_select', selected: text === '' ? null : optionOf(definition, text) };
    case 'multi_select':
      return {
        widget: 'multi_select',
        selected: text
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== '')
          .map((id) => optionOf(definition, id)),
      };
    case 'date':
      return { widget: 'date', date: text };
    case 'date_range': {
      const [start, end] = pair(text);
      return { widget: 'date_range', start, end };
    }
    case 'number':
      return text === 'disabled' ? { widget: 'disabled' } : { widget: 'number', value: text };
    case 'number_range': {
      const [lower, upper] = pair(text);
      return { widget: 'number_range', lower, upper };
    }
    default:
      return { widget: 'text', text };
  }
}

/** Selections for every parameter of `dataset`; throws naming the parameters left without a value. */
export function selectionsFromCli(
  project: Project,
  parameters: readonly string[],
  given: Readonly<Record<string, string>>,
): SelectionValues {
  const unknown = Object.keys(given).filter((name) => !parameters.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `not a parameter of this dataset: ${unknown.join(', ')} (it takes: ${parameters.join(', ')})`,
    );
  }
  const missing = parameters.filter((name) => !(name in given));
  if (missing.length > 0) {
    throw new Error(
      `give a value to every parameter: --param ${missing.map((name) => `${name}=...`).join(' --param ')}`,
    );
  }
  const selections: SelectionValues = {};
  for (const name of parameters) {
    selections[name] = selectionOf(definitionOf(project, name) ?? {}, given[name]);
  }
  return selections;
}
