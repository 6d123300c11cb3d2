import { randomBytes } from 'node:crypto';
import type { BoundValue } from '@/engine/sql/bound-value';

/** A template used a value in a way that would paste it into SQL text, or read something it may not. */
export class TemplateUseError extends Error {
  constructor(
    message: string,
    /** Text of the template that caused it (`params.nope`), to find its line: Nunjucks does not track it. */
    readonly source?: string,
  ) {
    super(message);
  }
}

const MISUSE =
  'a selection or user value cannot be compared or joined to text in a template: output it ' +
  "({{ params.x }}) to bind it, or test it with .is('value')";

/**
 * A value a template can output but never read: rendering it emits a placeholder and records the value.
 * The raw value sits in a private field, out of reach of template lookups.
 */
export class Bound {
  readonly #binder: Binder;
  readonly #bound: BoundValue;

  constructor(binder: Binder, bound: BoundValue) {
    this.#binder = binder;
    this.#bound = bound;
  }

  toString(): string {
    return this.#binder.markerOf(this, this.#bound);
  }

  // `==` and `~` convert with the default hint; refusing them keeps a value from becoming SQL text.
  [Symbol.toPrimitive](hint: string): string {
    if (hint === 'string') return this.toString();
    throw new TemplateUseError(MISUSE);
  }

  /** `{% if params.group_by.is('trans') %}`: a test that never exposes the value itself. */
  is(value: unknown): boolean {
    const own = this.#bound.value;
    const plain =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
    if (own === null || !plain) return own === value;
    return String(own) === String(value);
  }

  get is_empty(): boolean {
    return this.#bound.value === null || this.#bound.value === '';
  }
}

/** Base of objects that render as text made of placeholders; refuses the same conversions as {@link Bound}. */
export abstract class RenderedValue {
  abstract toString(): string;

  [Symbol.toPrimitive](hint: string): string {
    if (hint === 'string') return this.toString();
    throw new TemplateUseError(MISUSE);
  }
}

export interface FinishedSql {
  sql: string;
  binds: BoundValue[];
  /** Rewrites another text rendered with the same binder (a part of `sql`) with the same numbers. */
  apply(text: string): string;
}

/**
 * Collects the values a render binds. While rendering, a value becomes a marker no selection can forge (a
 * per-render nonce); `finish` numbers the markers `$1`, `$2`, ... in order of appearance, so values a template
 * touched but did not output are not bound.
 */
export class Binder {
  private readonly nonce = randomBytes(8).toString('hex');
  private readonly markers = new Map<Bound, string>();
  private readonly values = new Map<string, BoundValue>();

  bind(value: BoundValue): Bound {
    return new Bound(this, value);
  }

  markerOf(bound: Bound, value: BoundValue): string {
    let marker = this.markers.get(bound);
    if (!marker) {
      marker = `\u0001${this.nonce}:${this.markers.size}\u0001`;
      this.markers.set(bound, marker);
      this.values.set(marker, value);
    }
    return marker;
  }

  finish(sql: string): FinishedSql {
    const numbers = new Map<string, number>();
    const binds: BoundValue[] = [];
    for (const { marker, context } of scanMarkers(sql, this.nonce)) {
      if (context === 'comment' || numbers.has(marker)) continue;
      if (context !== 'code') {
        throw new TemplateUseError(
          `a bound value is rendered inside a quoted ${context}: write {{ ... }} outside quotes ` +
            "(for example concat('%', {{ params.text }}, '%'))",
        );
      }
      binds.push(this.values.get(marker) as BoundValue);
      numbers.set(marker, binds.length);
    }
    const apply = (text: string): string =>
      text.replace(new RegExp(`\u0001${this.nonce}:\\d+\u0001`, 'g'), (marker) => {
        const number = numbers.get(marker);
        return number === undefined ? '(bound value)' : `$${number}`;
      });
    return { sql: apply(sql), binds, apply };
  }
}

type Context = 'code' | 'string' | 'identifier' | 'comment';

/** Where each marker sits in the SQL: code, a '...' string, a "..." identifier, or a comment. */
function* scanMarkers(sql: string, nonce: string): Generator<{ marker: string; context: Context }> {
  let context: Context = 'code';
  let commentEnd = '';
  for (let i = 0; i < sql.length; i++) {
    const char = sql[i];
    if (char === '\u0001') {
      const end = sql.indexOf('\u0001', i + 1);
      const marker = sql.slice(i, end + 1);
      if (end > i && marker.startsWith(`\u0001${nonce}:`)) {
        yield { marker, context };
        i = end;
        continue;
      }
    }
    if (context === 'code') {
      if (char === "'") context = 'string';
      else if (char === '"') context = 'identifier';
      else if (char === '-' && sql[i + 1] === '-') [context, commentEnd] = ['comment', '\n'];
      else if (char === '/' && sql[i + 1] === '*') [context, commentEnd] = ['comment', '*/'];
    } else if (context === 'string' && char === "'") {
      if (sql[i + 1] === "'") i++;
      else context = 'code';
    } else if (context === 'identifier' && char === '"') {
      if (sql[i + 1] === '"') i++;
      else context = 'code';
    } else if (context === 'comment' && sql.startsWith(commentEnd, i)) {
      i += commentEnd.length - 1;
      context = 'code';
    }
  }
}
