import { decimalJson, integerJson, JsonValue } from '@/engine/sql/query-result';
import type { BoundValue } from '@/engine/sql/bound-value';
import type { ColumnType } from '@/core/project/project';

/**
 * Postgres values are read as text (every type parser is the identity), because text is exact: numerics
 * keep their digits, dates are not shifted into the server's time zone. These say what each type becomes.
 */
export const TEXT_TYPES = { getTypeParser: () => (text: string) => text };

interface PostgresType {
  postgres: string;
  /** The DuckDB type a source column is copied as. */
  duckdb: string;
  type: ColumnType;
  json: (text: string) => JsonValue;
}

const asText = (text: string): JsonValue => text;
const asFloat = (text: string): JsonValue => {
  const number = Number(text);
  return Number.isFinite(number) ? number : null;
};

const TYPES: Record<number, PostgresType> = {
  16: { postgres: 'boolean', duckdb: 'BOOLEAN', type: 'boolean', json: (text) => text === 't' },
  20: {
    postgres: 'bigint',
    duckdb: 'BIGINT',
    type: 'integer',
    json: (text) => integerJson(BigInt(text)),
  },
  21: { postgres: 'smallint', duckdb: 'SMALLINT', type: 'integer', json: Number },
  23: { postgres: 'integer', duckdb: 'INTEGER', type: 'integer', json: Number },
  26: { postgres: 'oid', duckdb: 'UINTEGER', type: 'integer', json: Number },
  700: { postgres: 'real', duckdb: 'FLOAT', type: 'number', json: asFloat },
  701: { postgres: 'double precision', duckdb: 'DOUBLE', type: 'number', json: asFloat },
  1082: { postgres: 'date', duckdb: 'DATE', type: 'date', json: asText },
  1114: {
    postgres: 'timestamp',
    duckdb: 'TIMESTAMP',
    type: 'datetime',
    json: (text) => text.replace(' ', 'T'),
  },
  // Read with the session time zone set to UTC, so the offset is always +00.
  1184: {
    postgres: 'timestamptz',
    duckdb: 'TIMESTAMPTZ',
    type: 'datetime',
    json: (text) => text.replace(' ', 'T').replace(/\+00$/, 'Z'),
  },
  1083: { postgres: 'time', duckdb: 'TIME', type: 'time', json: asText },
  1266: { postgres: 'timetz', duckdb: 'TIMETZ', type: 'time', json: asText },
  2950: { postgres: 'uuid', duckdb: 'UUID', type: 'string', json: asText },
};

const NUMERIC = 1700;
const TEXT: PostgresType = { postgres: 'text', duckdb: 'VARCHAR', type: 'string', json: asText };

/** `numeric(p,s)` keeps its precision; an unconstrained numeric has none DuckDB could hold, so DOUBLE. */
function numeric(typmod: number): PostgresType {
  const json = (text: string): JsonValue => (text === 'NaN' ? null : decimalJson(text));
  const unconstrained = { postgres: 'numeric', duckdb: 'DOUBLE', type: 'decimal' as const, json };
  if (typmod < 4) return unconstrained;
  const precision = ((typmod - 4) >> 16) & 0xffff;
  const scale = (typmod - 4) & 0xffff;
  if (precision < 1 || precision > 38) return unconstrained;
  const postgres = `numeric(${precision},${scale})`;
  return { postgres, duckdb: `DECIMAL(${precision},${scale})`, type: 'decimal', json };
}

export function postgresType(oid: number, typmod: number): PostgresType {
  if (oid === NUMERIC) return numeric(typmod);
  // Types without a mapping (arrays, json, intervals, ...) travel as Postgres prints them.
  return TYPES[oid] ?? { ...TEXT, postgres: `oid ${oid}` };
}

/** A bound value as `pg` sends it: as text Postgres casts from the statement's context. */
export function postgresParameter(bound: BoundValue): string | number | boolean | null {
  return bound.value;
}
