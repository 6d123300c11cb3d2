import { Decimal } from '@/core/parameters/decimal';
import {
  Origin,
  ProblemSink,
  TEXT_INPUT_TYPES,
  TextInputType,
  ValueSpec,
  ValueWidgetType,
  report,
} from '@/core/parameters/parameter-definition';
import { INPUT_TYPE_FORMS, dateFrom, shown, textFitsInputType } from '@/core/parameters/raw-values';

/** The keys that describe a non-select widget, at the top of a parameter or inside a variant. */
export const SPEC_KEYS: Record<ValueWidgetType, readonly string[]> = {
  date: ['min', 'max', 'default'],
  date_range: ['min', 'max', 'default'],
  number: ['min', 'max', 'increment', 'default'],
  number_range: ['min', 'max', 'increment', 'default'],
  text: ['default', 'input_type'],
};

interface NumberBounds {
  min: Decimal;
  max: Decimal;
  increment: Decimal;
}

/** Why a number does not fit its widget, as a person reads it; null when it fits. */
export function numberProblem(value: Decimal, bounds: NumberBounds): string | null {
  if (value.compare(bounds.min) < 0)
    return `${value.toString()} is below the minimum ${bounds.min.toString()}`;
  if (value.compare(bounds.max) > 0)
    return `${value.toString()} is above the maximum ${bounds.max.toString()}`;
  if (!value.subtract(bounds.min).isMultipleOf(bounds.increment)) {
    return `${value.toString()} is not a multiple of the increment ${bounds.increment.toString()} from ${bounds.min.toString()}`;
  }
  return null;
}

/** Why a date does not fit its widget; null when it fits. `YYYY-MM-DD` compares as text. */
export function dateProblem(date: string, bounds: { min: string; max: string }): string | null {
  if (date < bounds.min) return `${date} is before the earliest date ${bounds.min}`;
  if (date > bounds.max) return `${date} is after the latest date ${bounds.max}`;
  return null;
}

/**
 * Reads the fields of a widget. `complete` fills what is left out (an increment of 1, a default of min, a
 * range default of min..max) and checks the fields together; `fields` only checks the fields written, for
 * values beside `from_query` that the query's row completes at build time.
 */
export function parseValueSpec(
  widget: ValueWidgetType,
  raw: Record<string, unknown>,
  origin: Origin,
  sink: ProblemSink,
  mode: 'complete' | 'fields',
): ValueSpec | null {
  const reader = new FieldReader(raw, origin, sink);
  if (mode === 'fields') {
    checkFieldsOnly(widget, reader);
    return null;
  }
  const spec = read(widget, reader);
  return reader.failed ? null : spec;
}

function checkFieldsOnly(widget: ValueWidgetType, r: FieldReader): void {
  const ranged = widget === 'date_range' || widget === 'number_range';
  const isDate = widget === 'date' || widget === 'date_range';
  for (const key of SPEC_KEYS[widget]) {
    if (key === 'input_type') r.inputType();
    else if (widget === 'text') r.text(key);
    else if (key === 'default' && ranged && isDate) r.pair(key, dateFrom, 'a date YYYY-MM-DD');
    else if (key === 'default' && ranged) r.pair(key, (v) => Decimal.from(v), 'a number');
    else if (isDate) r.date(key);
    else r.number(key);
  }
}

function read(widget: ValueWidgetType, r: FieldReader): ValueSpec | null {
  switch (widget) {
    case 'date': {
      const [min, max] = r.dateBounds();
      const value = r.date('default') ?? min;
      if (min === undefined || max === undefined || value === undefined) return null;
      r.check('default', dateProblem(value, { min, max }));
      return { widget, min, max, default: value };
    }
    case 'date_range': {
      const [min, max] = r.dateBounds();
      const [start, end] = r.pair('default', dateFrom, 'a date YYYY-MM-DD');
      if (min === undefined || max === undefined) return null;
      const [defaultStart, defaultEnd] = [start ?? min, end ?? max];
      r.check(
        'default',
        dateProblem(defaultStart, { min, max }) ?? dateProblem(defaultEnd, { min, max }),
      );
      if (defaultStart > defaultEnd) {
        r.check('default', `start ${defaultStart} is after end ${defaultEnd}`);
      }
      return { widget, min, max, defaultStart, defaultEnd };
    }
    case 'number': {
      const bounds = r.numberBounds();
      const value = r.number('default') ?? bounds?.min;
      if (bounds === undefined || value === undefined) return null;
      r.check('default', numberProblem(value, bounds));
      return { widget, ...bounds, default: value };
    }
    case 'number_range': {
      const bounds = r.numberBounds();
      const [lower, upper] = r.pair('default', (v) => Decimal.from(v), 'a number');
      if (bounds === undefined) return null;
      const [defaultLower, defaultUpper] = [lower ?? bounds.min, upper ?? bounds.max];
      r.check(
        'default',
        numberProblem(defaultLower, bounds) ??
          numberProblem(defaultUpper, bounds) ??
          exactness(defaultLower) ??
          exactness(defaultUpper),
      );
      if (defaultLower.compare(defaultUpper) > 0) {
        r.check(
          'default',
          `lower ${defaultLower.toString()} is above upper ${defaultUpper.toString()}`,
        );
      }
      return { widget, ...bounds, defaultLower, defaultUpper };
    }
    case 'text': {
      const inputType = r.inputType() ?? 'text';
      const value = r.text('default') ?? '';
      if (!textFitsInputType(value, inputType)) {
        r.check(
          'default',
          `${shown(value)} is not ${INPUT_TYPE_FORMS[inputType]} (input_type ${inputType})`,
        );
      }
      return { widget, default: value, inputType };
    }
  }
}

function exactness(value: Decimal): string | null {
  return value.isExactAsNumber()
    ? null
    : `${value.toString()} has too many digits to be a JSON number exactly`;
}

/** Reads one field at a time, recording every problem; `failed` tells whether any was found. */
class FieldReader {
  failed = false;

  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly origin: Origin,
    private readonly sink: ProblemSink,
  ) {}

  check(key: string, problem: string | null): void {
    if (problem === null) return;
    this.failed = true;
    report(this.sink, this.origin, key, problem);
  }

  private value(key: string): unknown {
    const value = this.raw[key];
    return value === null ? undefined : value;
  }

  private required(key: string): void {
    this.check(key, 'is required');
  }

  date(key: string): string | undefined {
    const value = this.value(key);
    if (value === undefined) return undefined;
    const date = dateFrom(value);
    if (date === null) this.check(key, `${shown(value)} is not a date YYYY-MM-DD`);
    return date ?? undefined;
  }

  number(key: string): Decimal | undefined {
    const value = this.value(key);
    if (value === undefined) return undefined;
    const number = Decimal.from(value);
    if (number === null) this.check(key, `${shown(value)} is not a number`);
    else this.check(key, exactness(number));
    return number ?? undefined;
  }

  text(key: string): string | undefined {
    const value = this.value(key);
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'bigint') return String(value);
    this.check(key, 'must be text');
    return undefined;
  }

  inputType(): TextInputType | undefined {
    const value = this.value('input_type');
    if (value === undefined) return undefined;
    if (TEXT_INPUT_TYPES.includes(value as TextInputType)) return value as TextInputType;
    this.check('input_type', `must be one of ${TEXT_INPUT_TYPES.join(', ')}`);
    return undefined;
  }

  /** A list of two; a missing or null element falls back to min or max. */
  pair<T>(key: string, parse: (value: unknown) => T | null, what: string): [T?, T?] {
    const value = this.value(key);
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.length !== 2) {
      this.check(key, `must be a list of two values [lower, upper], each ${what}`);
      return [];
    }
    const parsed = value.map((element: unknown) => {
      if (element === null || element === undefined) return undefined;
      const result = parse(element);
      if (result === null) this.check(key, `${shown(element)} is not ${what}`);
      return result ?? undefined;
    });
    return [parsed[0], parsed[1]];
  }

  dateBounds(): [string?, string?] {
    const min = this.date('min');
    const max = this.date('max');
    if (min === undefined && this.value('min') === undefined) this.required('min');
    if (max === undefined && this.value('max') === undefined) this.required('max');
    if (min !== undefined && max !== undefined && min > max) {
      this.check('max', `${max} is before min ${min}`);
      return [];
    }
    return [min, max];
  }

  numberBounds(): NumberBounds | undefined {
    const min = this.number('min');
    const max = this.number('max');
    const written = this.number('increment');
    if (min === undefined && this.value('min') === undefined) this.required('min');
    if (max === undefined && this.value('max') === undefined) this.required('max');
    if (written !== undefined && written.sign() <= 0) {
      this.check('increment', `${written.toString()} must be greater than 0`);
    }
    const increment =
      written ?? (this.value('increment') === undefined ? Decimal.integer(1) : undefined);
    if (min === undefined || max === undefined || increment === undefined) return undefined;
    if (increment.sign() <= 0) return undefined;
    if (min.compare(max) > 0) {
      this.check('max', `${max.toString()} is below min ${min.toString()}`);
      return undefined;
    }
    if (!max.subtract(min).isMultipleOf(increment)) {
      this.check(
        'max',
        `max - min (${max.subtract(min).toString()}) is not a multiple of the increment ${increment.toString()}`,
      );
    }
    return { min, max, increment };
  }
}
