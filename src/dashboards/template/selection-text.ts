import type { SelectionValue, SelectionValues } from '@/core/parameters/selection-value';

/** A selection as the page header shows it: the parameter's label and what is selected, in words. */
export interface ShownSelection {
  name: string;
  label: string;
  text: string;
}

const DASH = '\u2013';

export function selectionText(value: SelectionValue): string | null {
  switch (value.widget) {
    case 'single_select':
      return value.selected?.label ?? 'None';
    case 'multi_select':
      // An empty multi-select filters nothing (decisions.md): the reader should read "all".
      return value.selected.length === 0 ? 'All' : value.selected.map((o) => o.label).join(', ');
    case 'date':
      return value.date;
    case 'date_range':
      return `${value.start} ${DASH} ${value.end}`;
    case 'number':
      return value.value;
    case 'number_range':
      return `${value.lower} ${DASH} ${value.upper}`;
    case 'text':
      return value.text === '' ? 'Any' : `\u201c${value.text}\u201d`;
    case 'disabled':
      return null;
  }
}

/** The dashboard's selections in its own order; disabled parameters are left out. */
export function shownSelections(
  names: readonly string[],
  values: SelectionValues,
  labelOf: (name: string) => string,
): ShownSelection[] {
  const shown: ShownSelection[] = [];
  for (const name of names) {
    const value = values[name];
    const text = value && selectionText(value);
    if (text !== null && text !== undefined) shown.push({ name, label: labelOf(name), text });
  }
  return shown;
}

/**
 * The selections as plain data for templates (`selected.date_range.start`): ids and labels of options,
 * dates and numbers as text, without the option's project-only custom fields.
 */
export function selectedData(values: SelectionValues): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    switch (value.widget) {
      case 'single_select':
        data[name] = value.selected && { id: value.selected.id, label: value.selected.label };
        break;
      case 'multi_select':
        data[name] = value.selected.map((o) => ({ id: o.id, label: o.label }));
        break;
      case 'date':
        data[name] = value.date;
        break;
      case 'date_range':
        data[name] = { start: value.start, end: value.end };
        break;
      case 'number':
        data[name] = value.value;
        break;
      case 'number_range':
        data[name] = { lower: value.lower, upper: value.upper };
        break;
      case 'text':
        data[name] = value.text;
        break;
      case 'disabled':
        data[name] = null;
        break;
    }
  }
  return data;
}
