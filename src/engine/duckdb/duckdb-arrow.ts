import { PassThrough, Readable } from 'node:stream';
import {
  Binary,
  Bool,
  DataType,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  Schema,
  TimeMicrosecond,
  TimeNanosecond,
  TimeUnit,
  Timestamp,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
} from 'apache-arrow';
import {
  DuckDBConnection,
  DuckDBDataChunk,
  DuckDBDecimalType,
  DuckDBType,
  DuckDBTypeId,
  StatementType,
} from '@duckdb/node-api';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { timeBudget } from '@/engine/duckdb/time-budget';
import { collectYoungChunks } from '@/engine/process/native-memory';
import { END_OF_STREAM, schemaMessage } from '@/engine/duckdb/arrow-ipc';
import { ArrowColumn, RecordBatchAssembler } from '@/engine/duckdb/arrow-batches';
import { NotAQueryError } from '@/engine/duckdb/duckdb-query';
import { selectColumns } from '@/engine/export/export-sql';
import { quoteIdentifier } from '@/engine/sql/sql-text';
import type { BoundValue } from '@/engine/sql/bound-value';

/**
 * How each DuckDB type becomes an Arrow column (see {@link ArrowColumn}): the types whose values DuckDB
 * already holds in Arrow's binary form, copied as they are.
 */
const FIXED: Partial<Record<DuckDBTypeId, { type: () => DataType; width: number }>> = {
  [DuckDBTypeId.TINYINT]: { type: () => new Int8(), width: 1 },
  [DuckDBTypeId.SMALLINT]: { type: () => new Int16(), width: 2 },
  [DuckDBTypeId.INTEGER]: { type: () => new Int32(), width: 4 },
  [DuckDBTypeId.BIGINT]: { type: () => new Int64(), width: 8 },
  [DuckDBTypeId.UTINYINT]: { type: () => new Uint8(), width: 1 },
  [DuckDBTypeId.USMALLINT]: { type: () => new Uint16(), width: 2 },
  [DuckDBTypeId.UINTEGER]: { type: () => new Uint32(), width: 4 },
  [DuckDBTypeId.UBIGINT]: { type: () => new Uint64(), width: 8 },
  [DuckDBTypeId.FLOAT]: { type: () => new Float32(), width: 4 },
  [DuckDBTypeId.DOUBLE]: { type: () => new Float64(), width: 8 },
  // Days since 1970 as a 32-bit integer in both.
  [DuckDBTypeId.DATE]: { type: () => new DateDay(), width: 4 },
  // A 64-bit count since 1970 (timestamps) or since midnight (times) in both, in the type's own unit.
  [DuckDBTypeId.TIMESTAMP_S]: { type: () => new Timestamp(TimeUnit.SECOND), width: 8 },
  [DuckDBTypeId.TIMESTAMP_MS]: { type: () => new Timestamp(TimeUnit.MILLISECOND), width: 8 },
  [DuckDBTypeId.TIMESTAMP]: { type: () => new Timestamp(TimeUnit.MICROSECOND), width: 8 },
  [DuckDBTypeId.TIMESTAMP_NS]: { type: () => new Timestamp(TimeUnit.NANOSECOND), width: 8 },
  [DuckDBTypeId.TIMESTAMP_TZ]: { type: () => new Timestamp(TimeUnit.MICROSECOND, 'UTC'), width: 8 },
  [DuckDBTypeId.TIME]: { type: () => new TimeMicrosecond(), width: 8 },
  [DuckDBTypeId.TIME_NS]: { type: () => new TimeNanosecond(), width: 8 },
};

/**
 * HUGEINT and UHUGEINT as Decimal256(39, 0): their values reach 39 digits (2^127 is
 * 170141183460469231731687303715884105728), which a Decimal128 cannot declare (its precision stops at 38),
 * so DuckDB's own Arrow export, a Decimal128(38, 0), declares less than its values hold. Each 16-byte value
 * is widened to 32 bytes (see {@link ArrowColumn.kind} `int128`).
 */
const HUGE_PRECISION = 39;

function arrowColumn(name: string, type: DuckDBType | DuckDBTypeId): ArrowColumn {
  const quoted = quoteIdentifier(name);
  const typeId = typeof type === 'number' ? type : type.typeId;
  const fixed = FIXED[typeId];
  if (fixed) return { name, type: fixed.type(), sql: quoted, kind: 'fixed', width: fixed.width };
  if (type instanceof DuckDBDecimalType) {
    // DuckDB keeps a DECIMAL of 19 to 38 digits in 16 bytes (a HUGEINT, least significant half first), as
    // Arrow's Decimal128 does; a narrower one in 2, 4 or 8 bytes, widened as it is copied. The field keeps
    // the column's own precision and scale.
    const field = new Decimal(type.scale, type.width, 128);
    const held = type.width <= 4 ? 2 : type.width <= 9 ? 4 : type.width <= 18 ? 8 : 16;
    return held === 16
      ? { name, type: field, sql: quoted, kind: 'fixed', width: 16 }
      : { name, type: field, sql: quoted, kind: 'decimal', width: 16, sourceWidth: held };
  }
  if (typeId === DuckDBTypeId.HUGEINT || typeId === DuckDBTypeId.UHUGEINT) {
    return {
      name,
      type: new Decimal(0, HUGE_PRECISION, 256),
      sql: quoted,
      kind: typeId === DuckDBTypeId.HUGEINT ? 'int128' : 'uint128',
      width: 32,
    };
  }
  if (typeId === DuckDBTypeId.BOOLEAN) {
    return { name, type: new Bool(), sql: quoted, kind: 'bool', width: 0 };
  }
  if (typeId === DuckDBTypeId.BLOB) {
    // Kept as DuckDB's strings are (length, then the bytes inline or behind a pointer): copied as text is.
    return { name, type: new Binary(), sql: quoted, kind: 'utf8', width: 0 };
  }
  // Text, and what Arrow has no type for here (times with a time zone, whose offset Arrow's times cannot
  // hold; intervals, lists, structs, UUIDs, enums): as DuckDB writes them as text.
  return {
    name,
    type: new Utf8(),
    sql: `CAST(${quoted} AS VARCHAR) AS ${quoted}`,
    kind: 'utf8',
    width: 0,
  };
}

/**
 * Bytes the reply may hold besides the batch being gathered: the next batch is built while the client
 * reads this one. Kept to a couple of batches, as what waits here for a slow client outlives scavenges
 * (see ARROW_BATCH_ROWS in arrow-batches.ts).
 */
const ARROW_OUT_HIGH_WATER = 2 * 1024 * 1024;

/**
 * A query's rows as an Arrow IPC stream (`application/vnd.apache.arrow.stream`): the schema, a record
 * batch per ARROW_BATCH_ROWS rows (arrow-batches.ts; the last one shorter, one of no rows for an empty
 * result), each one Buffer written as it is complete, read only as fast as the client takes them. DuckDB
 * has no Arrow writer of its own here (its `arrow` extension cannot be installed), so the values cross
 * into JavaScript, but as whole columns: numbers are copied, not turned into JSON. Selections stay bound
 * values. The stream ends the statement and closes `connection` (through `done`, told the rows sent)
 * however it ends.
 */
export function arrowStream(
  connection: DuckDBConnection,
  sql: string,
  binds: readonly BoundValue[],
  select: readonly string[],
  timeoutMs: number,
  done: (rows: number) => void,
): Readable {
  const timed = timeBudget(connection, timeoutMs);
  const out = new PassThrough({ writableHighWaterMark: ARROW_OUT_HIGH_WATER });
  /** Writes `pieces`, then waits while the reply holds too much; false once the client has gone. */
  const send = async (...pieces: Buffer[]): Promise<boolean> => {
    if (out.destroyed) return false;
    let room = true;
    for (const piece of pieces) room = out.write(piece);
    if (!room) await drained(out);
    return !out.destroyed;
  };
  let rows = 0;
  async function write(): Promise<void> {
    const probe = await timed(() => connection.prepare(`SELECT * FROM (\n${sql}\n)`));
    let all: ArrowColumn[];
    try {
      if (probe.statementType !== StatementType.SELECT) {
        throw new NotAQueryError('only queries (SELECT) may be exported');
      }
      all = [];
      for (let index = 0; index < probe.columnCount; index++) {
        // The type's details only for a DECIMAL: DuckDB's client cannot describe a type it has not
        // resolved yet (a column of a bound value, `SELECT $1`), which is written as text.
        const typeId = probe.columnTypeId(index);
        const type = typeId === DuckDBTypeId.DECIMAL ? probe.columnType(index) : typeId;
        all.push(arrowColumn(probe.columnName(index), type));
      }
    } finally {
      probe.destroySync();
    }
    const columns = selectColumns(
      all.map((column) => ({ name: column.name, kind: 'other' as const })),
      select,
    ).map(({ name }) => all.find((column) => column.name === name)!);
    const schema = new Schema(columns.map((column) => new Field(column.name, column.type, true)));
    const projection = columns.map((column) => column.sql).join(', ') || '*';
    const prepared = await timed(() =>
      connection.prepare(`SELECT ${projection} FROM (\n${sql}\n)`),
    );
    // One chunk ahead: DuckDB works on the next chunk while this one is looked at.
    let next: Promise<DuckDBDataChunk | null> | undefined;
    try {
      const { values, types } = duckdbParameters(binds);
      prepared.bind(values, types);
      const result = await timed(() => prepared.stream());
      // Sent with the first batch: the reply's status waits for its first chunk, so a query failing
      // in its first rows is still answered as an error, not a truncated 200.
      let header: Buffer[] = [schemaMessage(schema)];
      const sendBatch = (bytes: Buffer): Promise<boolean> => {
        const pieces = [...header, bytes];
        header = [];
        return send(...pieces);
      };
      const fetch = (): Promise<DuckDBDataChunk | null> => {
        const fetched = timed(() => result.fetchChunk());
        // Left unread when the stream stops early; awaited (and so reported) otherwise.
        fetched.catch(() => undefined);
        return fetched;
      };
      next = fetch();
      const batch = new RecordBatchAssembler(columns);
      for (;;) {
        const chunk = await next;
        if (!chunk || chunk.rowCount === 0) break;
        next = fetch();
        batch.add(chunk);
        rows += chunk.rowCount;
        if (batch.full) {
          if (!(await sendBatch(batch.take()))) return;
          // The batch's chunks are let go of now, and the reader has had its turn to take the batch
          // and let go of the one before: a scavenge frees both, before they can survive a second
          // one and move to the old generation (see RecordBatchAssembler).
          await new Promise(setImmediate);
          collectYoungChunks();
        }
      }
      // A result without rows still has a batch, of none.
      if (batch.rows > 0 || header.length > 0) {
        if (!(await sendBatch(batch.take()))) return;
      }
      out.end(END_OF_STREAM);
    } finally {
      // The statement is not destroyed under a fetch still running.
      await next?.catch(() => undefined);
      prepared.destroySync();
    }
  }
  void (async () => {
    try {
      try {
        await write();
      } finally {
        done(rows);
      }
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return out;
}

/** Resolves once `out` has room again, or is gone. */
function drained(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const go = (): void => {
      out.off('drain', go);
      out.off('close', go);
      resolve();
    };
    out.once('drain', go);
    out.once('close', go);
  });
}
