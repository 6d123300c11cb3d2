import type { Evaluated } from '@/core/parameters/cascade';
import type {
  OptionDefinition,
  ParameterDefinition,
  TextInputType,
} from '@/core/parameters/parameter-definition';
import type { OptionValue, SelectionValue } from '@/core/parameters/selection-value';

/** A widget parameter exactly as section 2.7 of the interface gives it. */

interface WidgetBase {
  name: string;
  label: string;
  /** May be empty. */
  description: string;
}

export interface OptionJson {
  id: string;
  label: string;
}

export type WidgetJson =
  | ({ widget_type: 'disabled' } & WidgetBase)
  | ({
      widget_type: 'single_select';
      options: OptionJson[];
      trigger_refresh: boolean;
      /** Null only when no option is available to the caller. */
      selected_id: string | null;
    } & WidgetBase)
  | ({
      widget_type: 'multi_select';
      options: OptionJson[];
      trigger_refresh: boolean;
      show_select_all: boolean;
      order_matters: boolean;
      selected_ids: string[];
    } & WidgetBase)
  | ({
      widget_type: 'date';
      min_date: string;
      max_date: string;
      selected_date: string;
    } & WidgetBase)
  | ({
      widget_type: 'date_range';
      min_date: string;
      max_date: string;
      selected_start_date: string;
      selected_end_date: string;
    } & WidgetBase)
  | ({
      widget_type: 'number';
      min_value: number;
      max_value: number;
      increment: number;
      selected_value: number;
    } & WidgetBase)
  | ({
      widget_type: 'number_range';
      min_value: number;
      max_value: number;
      increment: number;
      selected_lower_value: number;
      selected_upper_value: number;
    } & WidgetBase)
  | ({ widget_type: 'text'; entered_text: string; input_type: TextInputType } & WidgetBase);

/** Keys in the order of 2.7: the common fields first, then the widget's own. */
export function toWidgetJson(
  def: ParameterDefinition,
  value: Evaluated,
  triggerRefresh: boolean,
): WidgetJson {
  const base = { name: def.name, label: def.label, description: def.description };
  const options = (list: OptionDefinition[]) => list.map(({ id, label }) => ({ id, label }));
  switch (value.widget) {
    case 'disabled':
      return { widget_type: 'disabled', ...base };
    case 'single_select':
      return {
        widget_type: 'single_select',
        ...base,
        options: options(value.available),
        trigger_refresh: triggerRefresh,
        selected_id: value.selected?.id ?? null,
      };
    case 'multi_select':
      return {
        widget_type: 'multi_select',
        ...base,
        options: options(value.available),
        trigger_refresh: triggerRefresh,
        show_select_all: def.kind === 'select' && def.showSelectAll,
        order_matters: def.kind === 'select' && def.orderMatters,
        selected_ids: value.selected.map((option) => option.id),
      };
    case 'date':
      return {
        widget_type: 'date',
        ...base,
        min_date: value.spec.min,
        max_date: value.spec.max,
        selected_date: value.date,
      };
    case 'date_range':
      return {
        widget_type: 'date_range',
        ...base,
        min_date: value.spec.min,
        max_date: value.spec.max,
        selected_start_date: value.start,
        selected_end_date: value.end,
      };
    case 'number':
      return {
        widget_type: 'number',
        ...base,
        min_value: value.spec.min.toNumber(),
        max_value: value.spec.max.toNumber(),
        increment: value.spec.increment.toNumber(),
        selected_value: value.value.toNumber(),
      };
    case 'number_range':
      return {
        widget_type: 'number_range',
        ...base,
        min_value: value.spec.min.toNumber(),
        max_value: value.spec.max.toNumber(),
        increment: value.spec.increment.toNumber(),
        selected_lower_value: value.lower.toNumber(),
        selected_upper_value: value.upper.toNumber(),
      };
    case 'text':
      return {
        widget_type: 'text',
        ...base,
        entered_text: value.text,
        input_type: value.spec.inputType,
      };
  }
}

/** The validated value the SQL engine binds; numbers stay exact decimal strings. */
export function toSelectionValue(value: Evaluated): SelectionValue {
  // A copy: the engine gets values it may keep without reaching into the catalog.
  const option = ({ id, label, fields }: OptionDefinition): OptionValue => ({
    id,
    label,
    fields: { ...fields },
  });
  switch (value.widget) {
    case 'disabled':
      return { widget: 'disabled' };
    case 'single_select':
      return { widget: 'single_select', selected: value.selected ? option(value.selected) : null };
    case 'multi_select':
      return { widget: 'multi_select', selected: value.selected.map(option) };
    case 'date':
      return { widget: 'date', date: value.date };
    case 'date_range':
      return { widget: 'date_range', start: value.start, end: value.end };
    case 'number':
      return { widget: 'number', value: value.value.toString() };
    case 'number_range':
      return {
        widget: 'number_range',
        lower: value.lower.toString(),
        upper: value.upper.toString(),
      };
    case 'text':
      return { widget: 'text', text: value.text };
  }
}
