import { runtime } from 'nunjucks';
import { Binder, Bound, RenderedValue, TemplateUseError } from '@/engine/templating/binder';
import { dateValue, decimalValue } from '@/engine/sql/bound-value';
import type { OptionValue, SelectionValue } from '@/core/parameters/selection-value';

/**
 * What `params.<name>` is in a template. Values render as placeholders ({@link Bound}); only the custom
 * fields of options, which the project itself writes, render as SQL text.
 */

/** Keys that libraries probe on any object (promises, JSON, inspection); answering undefined is harmless. */
const PROBES = new Set(['then', 'toJSON', 'constructor', 'inspect', 'asymmetricMatch', 'nodeType']);

/** An object whose unknown keys are errors, so that a typo in a template fails instead of rendering ''. */
export function strict<T extends object>(
  target: T,
  unknown: (key: string) => string,
  path?: string,
): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === 'symbol' || key in object || PROBES.has(key)) {
        return Reflect.get(object, key, receiver) as unknown;
      }
      throw new TemplateUseError(unknown(key), path && `${path}.${key}`);
    },
  });
}

function trustedFields(option: OptionValue, parameter: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(option.fields)) {
    // Autoescaping is on to route every output through toString(); project text must pass unescaped.
    fields[key] = typeof value === 'string' ? new runtime.SafeString(value) : value;
  }
  return strict(
    fields,
    (key) => `option "${option.id}" of parameter "${parameter}" has no custom field "${key}"`,
    'fields',
  );
}

export class OptionView {
  readonly id: Bound;
  readonly label: Bound;
  readonly fields: Record<string, unknown>;

  constructor(binder: Binder, option: OptionValue, parameter: string) {
    this.id = binder.bind({ type: 'text', value: option.id });
    this.label = binder.bind({ type: 'text', value: option.label });
    this.fields = trustedFields(option, parameter);
  }
}

class SingleSelectView extends RenderedValue {
  readonly widget = 'single_select';
  readonly enabled = true;
  readonly selected: OptionView | null;
  readonly #none: Bound;

  constructor(binder: Binder, selected: OptionValue | null, parameter: string) {
    super();
    this.selected = selected && new OptionView(binder, selected, parameter);
    this.#none = binder.bind({ type: 'null', value: null });
  }

  get id(): Bound {
    return this.selected?.id ?? this.#none;
  }

  is(id: unknown): boolean {
    return this.id.is(id);
  }

  toString(): string {
    return this.id.toString();
  }
}

/** A list whose `in` test compares option ids (Nunjucks `in` calls indexOf), without exposing them. */
function idList(ids: Bound[]): Bound[] {
  Object.defineProperty(ids, 'indexOf', {
    value: (id: unknown) => ids.findIndex((bound) => bound.is(id)),
  });
  return ids;
}

class MultiSelectView extends RenderedValue {
  readonly widget = 'multi_select';
  readonly enabled = true;
  readonly selected: OptionView[];
  readonly ids: Bound[];
  readonly labels: Bound[];

  constructor(binder: Binder, selected: OptionValue[], parameter: string) {
    super();
    this.selected = selected.map((option) => new OptionView(binder, option, parameter));
    this.ids = idList(this.selected.map((option) => option.id));
    this.labels = this.selected.map((option) => option.label);
  }

  get is_empty(): boolean {
    return this.selected.length === 0;
  }

  has(id: unknown): boolean {
    return this.ids.some((bound) => bound.is(id));
  }

  /** `IN ({{ params.category }})`: one placeholder per selected id. */
  toString(): string {
    return this.ids.map((id) => id.toString()).join(', ');
  }
}

function rangeMisuse(parameter: string, low: string, high: string): TemplateUseError {
  return new TemplateUseError(
    `parameter "${parameter}" is a range: output params.${parameter}.${low} and .${high}`,
    `params.${parameter}`,
  );
}

class DateRangeView extends RenderedValue {
  readonly widget = 'date_range';
  readonly enabled = true;
  readonly #parameter: string;

  constructor(
    readonly start: Bound,
    readonly end: Bound,
    parameter: string,
  ) {
    super();
    this.#parameter = parameter;
  }

  toString(): string {
    throw rangeMisuse(this.#parameter, 'start', 'end');
  }
}

class NumberRangeView extends RenderedValue {
  readonly widget = 'number_range';
  readonly enabled = true;
  readonly #parameter: string;

  constructor(
    readonly lower: Bound,
    readonly upper: Bound,
    parameter: string,
  ) {
    super();
    this.#parameter = parameter;
  }

  toString(): string {
    throw rangeMisuse(this.#parameter, 'lower', 'upper');
  }
}

class DisabledView extends RenderedValue {
  readonly widget = 'disabled';
  readonly enabled = false;
  readonly #parameter: string;

  constructor(parameter: string) {
    super();
    this.#parameter = parameter;
  }

  toString(): string {
    const name = this.#parameter;
    throw new TemplateUseError(
      `parameter "${name}" is disabled for this selection: guard it with {% if params.${name}.enabled %}`,
      `params.${name}`,
    );
  }
}

/** Bound values carry these so that templates can test them like the other views. */
function withWidget(bound: Bound, widget: string): Bound {
  return Object.assign(bound, { widget, enabled: true });
}

export function selectionView(binder: Binder, name: string, selection: SelectionValue): unknown {
  switch (selection.widget) {
    case 'single_select':
      return new SingleSelectView(binder, selection.selected, name);
    case 'multi_select':
      return new MultiSelectView(binder, selection.selected, name);
    case 'date':
      return withWidget(binder.bind(dateValue(selection.date)), 'date');
    case 'date_range':
      return new DateRangeView(
        binder.bind(dateValue(selection.start)),
        binder.bind(dateValue(selection.end)),
        name,
      );
    case 'number':
      return withWidget(binder.bind(decimalValue(selection.value)), 'number');
    case 'number_range':
      return new NumberRangeView(
        binder.bind(decimalValue(selection.lower)),
        binder.bind(decimalValue(selection.upper)),
        name,
      );
    case 'text':
      return withWidget(binder.bind({ type: 'text', value: selection.text }), 'text');
    case 'disabled':
      return new DisabledView(name);
  }
}
