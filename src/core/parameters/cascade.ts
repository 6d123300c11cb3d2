import { listSome } from '@/core/listing';
import type { Decimal } from '@/core/parameters/decimal';
import {
  OptionDefinition,
  ParameterDefinition,
  SelectDefinition,
  ValueDefinition,
  ValueSpec,
} from '@/core/parameters/parameter-definition';
import { invalidSelection } from '@/core/parameters/parameter-errors';
import { INPUT_TYPE_FORMS, shown, textFitsInputType } from '@/core/parameters/raw-values';
import { SelectionReader } from '@/core/parameters/selection-reader';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { dateProblem, numberProblem } from '@/core/parameters/value-spec';

type SpecOf<W extends ValueSpec['widget']> = Extract<ValueSpec, { widget: W }>;

/** A parameter's state for one request: its widget, the options it offers and what is selected. */
export type Evaluated =
  | { widget: 'single_select'; available: OptionDefinition[]; selected: OptionDefinition | null }
  | { widget: 'multi_select'; available: OptionDefinition[]; selected: OptionDefinition[] }
  | { widget: 'date'; spec: SpecOf<'date'>; date: string }
  | { widget: 'date_range'; spec: SpecOf<'date_range'>; start: string; end: string }
  | { widget: 'number'; spec: SpecOf<'number'>; value: Decimal }
  | { widget: 'number_range'; spec: SpecOf<'number_range'>; lower: Decimal; upper: Decimal }
  | { widget: 'text'; spec: SpecOf<'text'>; text: string }
  | { widget: 'disabled' };

export interface Evaluation {
  values: ReadonlyMap<string, Evaluated>;
  /** Own parameters whose given value was applied. */
  applied: string[];
  /** Own parameters given a value while disabled: the value is ignored. */
  ignored: string[];
}

/**
 * Evaluates every parameter, parents before children (`order`), so a child sees its parent's selection.
 * Only the endpoint's own parameters (`own`) take the request's selections; the others keep their defaults.
 */
export function evaluate(
  order: readonly ParameterDefinition[],
  own: ReadonlySet<string>,
  request: ParameterRequest,
  caller: CallerView,
): Evaluation {
  const values = new Map<string, Evaluated>();
  const applied: string[] = [];
  const ignored: string[] = [];
  for (const def of order) {
    const raw = own.has(def.name) ? request.selections.get(def.name) : undefined;
    const parentIds = def.parent === null ? null : effectiveIds(values.get(def.parent));
    const reader = raw && new SelectionReader(def.name, raw, request.forms);
    const value =
      def.kind === 'select'
        ? evaluateSelect(def, parentIds, reader, caller)
        : evaluateValue(def, parentIds, reader);
    if (raw) (value.widget === 'disabled' ? ignored : applied).push(def.name);
    values.set(def.name, value);
  }
  return { values, applied, ignored };
}

/** The parent option ids that decide a child's options: an empty multi-select counts as all of them. */
function effectiveIds(parent: Evaluated | undefined): Set<string> {
  if (parent?.widget === 'single_select')
    return new Set(parent.selected ? [parent.selected.id] : []);
  if (parent?.widget === 'multi_select') {
    const chosen = parent.selected.length > 0 ? parent.selected : parent.available;
    return new Set(chosen.map((option) => option.id));
  }
  return new Set();
}

function isVisible(option: OptionDefinition, def: SelectDefinition, caller: CallerView): boolean {
  if (option.userGroups === null) return true;
  if (caller.username === null || def.userGroupField === null) return false;
  const value = caller.fields[def.userGroupField.name];
  return value !== undefined && option.userGroups.includes(value);
}

function evaluateSelect(
  def: SelectDefinition,
  parentIds: Set<string> | null,
  reader: SelectionReader | undefined,
  caller: CallerView,
): Evaluated {
  const visible = def.options.filter((option) => isVisible(option, def, caller));
  const available =
    parentIds === null
      ? visible
      : visible.filter((option) => option.parentOptionIds.some((id) => parentIds.has(id)));
  const find = (id: string) => available.find((option) => option.id === id);

  if (reader) {
    const ids = def.widget === 'single_select' ? [reader.id()] : reader.ids();
    const selected = ids.map((id) => {
      const option = find(id);
      if (option) return option;
      throw invalidSelection(
        def.name,
        `${whyNot(def, visible, id, caller)}; ${choices(available)}${severalHint(def, id, available, reader)}`,
      );
    });
    return def.widget === 'single_select'
      ? { widget: def.widget, available, selected: selected[0] }
      : { widget: def.widget, available, selected };
  }

  const defaults =
    def.defaultIds ?? def.options.filter((option) => option.isDefault).map((o) => o.id);
  const chosen = defaults.map(find).filter((option): option is OptionDefinition => !!option);
  return def.widget === 'single_select'
    ? { widget: def.widget, available, selected: chosen[0] ?? available[0] ?? null }
    : { widget: def.widget, available, selected: chosen };
}

/**
 * Why an id cannot be chosen. The caller named the id: saying that it is restricted tells them nothing they
 * did not write, and spares them looking for a typo (what "does not exist" sent them to).
 */
function whyNot(
  def: SelectDefinition,
  visible: readonly OptionDefinition[],
  id: string,
  caller: CallerView,
): string {
  if (visible.some((candidate) => candidate.id === id))
    return `option ${shown(id)} is not available for the current selection of "${def.parent}"`;
  if (def.options.some((candidate) => candidate.id === id))
    return caller.username === null
      ? `option ${shown(id)} is not available without signing in`
      : `option ${shown(id)} is not available to you`;
  return `option ${shown(id)} does not exist`;
}

/**
 * `bike,scooter` sent for a multi_select whose options are `bike` and `scooter`: one id with a comma in it,
 * since a query string lists several values by repeating the name (the CLI's `--param` splits on commas,
 * the interface does not). Says how to send the list.
 */
function severalHint(
  def: SelectDefinition,
  id: string,
  available: readonly OptionDefinition[],
  reader: SelectionReader,
): string {
  if (def.widget !== 'multi_select' || !id.includes(',')) return '';
  const ids = id.split(',').map((part) => part.trim());
  if (!ids.every((part) => available.some((option) => option.id === part))) return '';
  if (reader.source === 'body') {
    return `; to choose several, send a JSON list: ${JSON.stringify(ids).slice(0, 200)}`;
  }
  const query = ids.map((part) => `${def.name}=${encodeURIComponent(part)}`).join('&');
  return `; to choose several, repeat the name: ?${query.slice(0, 200)}`;
}

/** The ids this caller may choose now, and only those: an option hidden from them is never named. */
function choices(available: readonly OptionDefinition[]): string {
  return available.length === 0
    ? 'no option can be chosen now'
    : `the options are ${listSome(available.map((option) => option.id))}`;
}

function evaluateValue(
  def: ValueDefinition,
  parentIds: Set<string> | null,
  reader: SelectionReader | undefined,
): Evaluated {
  const variant = def.variants.find(
    (candidate) =>
      candidate.parentOptionIds === null ||
      (parentIds !== null && candidate.parentOptionIds.some((id) => parentIds.has(id))),
  );
  if (variant === undefined) return { widget: 'disabled' };
  const spec = variant.spec;
  const check = (problem: string | null) => {
    if (problem !== null) throw invalidSelection(def.name, problem);
  };
  switch (spec.widget) {
    case 'date': {
      const date = reader ? reader.date() : spec.default;
      check(dateProblem(date, spec));
      return { widget: spec.widget, spec, date };
    }
    case 'date_range': {
      const [start, end] = reader ? reader.dates() : [spec.defaultStart, spec.defaultEnd];
      check(dateProblem(start, spec) ?? dateProblem(end, spec));
      if (start > end) check(`start ${start} is after end ${end}`);
      return { widget: spec.widget, spec, start, end };
    }
    case 'number': {
      const value = reader ? reader.number() : spec.default;
      check(numberProblem(value, spec));
      return { widget: spec.widget, spec, value };
    }
    case 'number_range': {
      const [lower, upper] = reader ? reader.numbers() : [spec.defaultLower, spec.defaultUpper];
      check(numberProblem(lower, spec) ?? numberProblem(upper, spec));
      if (lower.compare(upper) > 0)
        check(`lower ${lower.toString()} is above upper ${upper.toString()}`);
      return { widget: spec.widget, spec, lower, upper };
    }
    case 'text': {
      const text = reader ? reader.text() : spec.default;
      if (!textFitsInputType(text, spec.inputType)) {
        check(`${shown(text)} is not ${INPUT_TYPE_FORMS[spec.inputType]}`);
      }
      return { widget: spec.widget, spec, text };
    }
  }
}
