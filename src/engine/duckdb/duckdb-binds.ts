import {
  BIGINT,
  BOOLEAN,
  DATE,
  DECIMAL,
  DOUBLE,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBType,
  DuckDBValue,
  SQLNULL,
  VARCHAR,
} from '@duckdb/node-api';
import type { BoundValue } from '@/engine/sql/bound-value';

const MAX_BIGINT = 2n ** 63n - 1n;

/**
 * An exact decimal as DuckDB's DECIMAL, or BIGINT when it is whole (so that `LIMIT $1` and integer
 * comparisons need no cast). Never a double: `0.1` must compare equal to a DECIMAL(10,2) 0.10.
 */
function decimal(text: string): { value: DuckDBValue; type: DuckDBType } {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace(/^-/, '').split('.');
  const digits = BigInt(whole + fraction) * (negative ? -1n : 1n);
  if (fraction === '' && digits <= MAX_BIGINT && digits >= -MAX_BIGINT) {
    return { value: digits, type: BIGINT };
  }
  const scale = fraction.length;
  const width = Math.max(whole.replace(/^0+/, '').length + scale, scale + 1);
  if (width > 38) throw new Error(`the number ${text} has more than 38 digits`);
  return { value: new DuckDBDecimalValue(digits, width, scale), type: DECIMAL(width, scale) };
}

function date(text: string): DuckDBDateValue {
  const [year, month, day] = text.split('-').map(Number);
  return DuckDBDateValue.fromParts({ year, month, day });
}

/** The value and type a bound value is given to DuckDB with. */
export function duckdbParameter(bound: BoundValue): { value: DuckDBValue; type: DuckDBType } {
  switch (bound.type) {
    case 'text':
      return { value: bound.value, type: VARCHAR };
    case 'decimal':
      return decimal(bound.value);
    case 'integer':
      return { value: BigInt(bound.value), type: BIGINT };
    case 'number':
      return { value: bound.value, type: DOUBLE };
    case 'date':
      return { value: date(bound.value), type: DATE };
    case 'boolean':
      return { value: bound.value, type: BOOLEAN };
    case 'null':
      return { value: null, type: SQLNULL };
  }
}

export function duckdbParameters(binds: readonly BoundValue[]): {
  values: DuckDBValue[];
  types: DuckDBType[];
} {
  const parameters = binds.map(duckdbParameter);
  return {
    values: parameters.map((parameter) => parameter.value),
    types: parameters.map((parameter) => parameter.type),
  };
}
