import { Decimal } from '@/core/parameters/decimal';
import { invalidSelection } from '@/core/parameters/parameter-errors';
import { isDate, shown } from '@/core/parameters/raw-values';
import type { RawSelection, SelectionForms } from '@/core/parameters/selection-request';

/**
 * Reads a raw selection as the value a widget type takes, in the forms of section 4.4: only those of the
 * interface when `strict`, also comma-joined lists, JSON-list strings and numbers for ids and texts when
 * `lenient`. Every refusal names the parameter and what was wrong.
 */
export class SelectionReader {
  private readonly lenient: boolean;

  constructor(
    private readonly name: string,
    private readonly raw: RawSelection,
    forms: SelectionForms,
  ) {
    this.lenient = forms === 'lenient';
  }

  /** Where the selection came from: a query string's values or a JSON body's value. */
  get source(): RawSelection['source'] {
    return this.raw.source;
  }

  private fail(problem: string): never {
    throw invalidSelection(this.name, problem);
  }

  /** One option id (single_select). */
  id(): string {
    const value = this.scalar('one option id');
    if (typeof value === 'string') return value;
    if (this.lenient && typeof value === 'number') return String(value);
    return this.fail(`expects an option id as a string, got ${shown(value)}`);
  }

  /** Option ids (multi_select); an empty value or list selects none. */
  ids(): string[] {
    const ids = this.list('a list of option ids').map((item) => {
      if (typeof item === 'string') return item;
      if (this.lenient && typeof item === 'number') return String(item);
      return this.fail(`expects option ids as strings, got ${shown(item)}`);
    });
    return [...new Set(ids)];
  }

  date(): string {
    return this.toDate(this.scalar('one date'));
  }

  dates(): [string, string] {
    const [start, end] = this.pair('two dates (start, end)');
    return [this.toDate(start), this.toDate(end)];
  }

  number(): Decimal {
    return this.toNumber(this.scalar('one number'));
  }

  numbers(): [Decimal, Decimal] {
    const [lower, upper] = this.pair('two numbers (lower, upper)');
    return [this.toNumber(lower), this.toNumber(upper)];
  }

  text(): string {
    const value = this.scalar('one text');
    if (typeof value === 'string') return value;
    if (this.lenient && typeof value === 'number') return String(value);
    return this.fail(`expects a text, got ${shown(value)}`);
  }

  private toDate(value: unknown): string {
    if (typeof value === 'string' && isDate(value)) return value;
    return this.fail(`${shown(value)} is not a date YYYY-MM-DD`);
  }

  /** Numbers may be JSON numbers or strings holding a decimal number, in either form. */
  private toNumber(value: unknown): Decimal {
    const number =
      typeof value === 'string' || typeof value === 'number' ? Decimal.from(value) : null;
    return number ?? this.fail(`${shown(value)} is not a number`);
  }

  private scalar(what: string): unknown {
    if (this.raw.source === 'query') {
      const { values } = this.raw;
      if (values.length !== 1) this.fail(`expects ${what}, got ${values.length} values`);
      return values[0];
    }
    const { value } = this.raw;
    if (typeof value === 'object' && value !== null)
      this.fail(`expects ${what}, got ${shown(value)}`);
    return value;
  }

  private pair(what: string): [unknown, unknown] {
    const items = this.list(what);
    if (items.length !== 2)
      this.fail(`expects ${what}, got ${items.length} value${items.length === 1 ? '' : 's'}`);
    return [items[0], items[1]];
  }

  /**
   * Strict: the name repeated (GET) or a JSON array (POST). Lenient also: one value holding `a,b,c` or a
   * JSON list `["a","b"]`. A single empty GET value (`category=`) is an empty list.
   */
  private list(what: string): unknown[] {
    if (this.raw.source === 'query') {
      const { values } = this.raw;
      if (values.length === 1 && values[0] === '') return [];
      return this.lenient && values.length === 1 ? this.expand(values[0]) : values;
    }
    const { value } = this.raw;
    if (Array.isArray(value)) return value;
    if (this.lenient && typeof value === 'string') return this.expand(value);
    if (this.lenient && typeof value === 'number') return [value];
    return this.fail(`expects ${what} as a JSON array, got ${shown(value)}`);
  }

  private expand(text: string): unknown[] {
    const trimmed = text.trim();
    if (trimmed === '') return [];
    if (!trimmed.startsWith('[')) return trimmed.split(',').map((item) => item.trim());
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Reported below, with the text as sent.
    }
    return this.fail(`${shown(text)} is not a valid JSON list`);
  }
}
