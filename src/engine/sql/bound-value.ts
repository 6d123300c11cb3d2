/**
 * A value that reaches a database only as a bound parameter. The type decides how it is bound: DuckDB gets
 * typed parameters, Postgres gets text it casts from the statement's context.
 */
export type BoundValue =
  | { type: 'text'; value: string }
  /** An exact decimal written as text (`"0.3"`), never a binary float. */
  | { type: 'decimal'; value: string }
  | { type: 'integer'; value: number }
  | { type: 'number'; value: number }
  /** `YYYY-MM-DD`. */
  | { type: 'date'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'null'; value: null };

const DECIMAL = /^-?\d+(\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function decimalValue(value: string): BoundValue {
  if (!DECIMAL.test(value)) throw new Error(`"${value}" is not a decimal number`);
  return { type: 'decimal', value };
}

export function dateValue(value: string): BoundValue {
  if (!DATE.test(value)) throw new Error(`"${value}" is not a date (YYYY-MM-DD)`);
  return { type: 'date', value };
}

/** How `compile` shows a bound value: as SQL would write it, with its type. */
export function describeBound(bound: BoundValue): string {
  switch (bound.type) {
    case 'text':
    case 'date':
      return `'${bound.value.replace(/'/g, "''")}' (${bound.type})`;
    case 'decimal':
    case 'integer':
    case 'number':
    case 'boolean':
      return `${String(bound.value)} (${bound.type})`;
    case 'null':
      return 'NULL';
  }
}
