import { PassThrough, Readable } from 'node:stream';
import {
  Bool,
  Data,
  DataType,
  DateDay,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimeUnit,
  Timestamp,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  makeData,
} from 'apache-arrow';
import { DuckDBConnection, DuckDBDataChunk, DuckDBTypeId, StatementType } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { duckdbParameters } from '@/engine/duckdb/duckdb-binds';
import { timeBudget } from '@/engine/duckdb/time-budget';
import { NotAQueryError } from '@/engine/duckdb/duckdb-query';
import { selectColumns } from '@/engine/export/export-sql';
import { quoteIdentifier } from '@/engine/sql-text';
import type { BoundValue } from '@/engine/templating/bound-value';

/**
 * How a DuckDB column becomes an Arrow one: the types Arrow and DuckDB share keep their binary form, and
 * the query casts the others first (decimals and huge integers to DOUBLE, timestamps of other units to
 * microseconds, everything else to text), so that the JavaScript side only copies numbers and encodes text.
 */
interface ArrowColumn {
  name: string;
  type: DataType;
  /** The column's expression in the projection. */
  sql: string;
  /** How its values are copied from a chunk's vector. */
  kind: 'typed' | 'bool' | 'date' | 'utf8';
}

const TYPED: Partial<Record<DuckDBTypeId, () => DataType>> = {
  [DuckDBTypeId.TINYINT]: () => new Int8(),
  [DuckDBTypeId.SMALLINT]: () => new Int16(),
  [DuckDBTypeId.INTEGER]: () => new Int32(),
  [DuckDBTypeId.BIGINT]: () => new Int64(),
  [DuckDBTypeId.UTINYINT]: () => new Uint8(),
  [DuckDBTypeId.USMALLINT]: () => new Uint16(),
  [DuckDBTypeId.UINTEGER]: () => new Uint32(),
  [DuckDBTypeId.UBIGINT]: () => new Uint64(),
  [DuckDBTypeId.FLOAT]: () => new Float32(),
  [DuckDBTypeId.DOUBLE]: () => new Float64(),
};

const TIMESTAMPS = new Set([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
]);

const AS_DOUBLE = new Set([DuckDBTypeId.DECIMAL, DuckDBTypeId.HUGEINT, DuckDBTypeId.UHUGEINT]);

function arrowColumn(name: string, type: DuckDBTypeId): ArrowColumn {
  const quoted = quoteIdentifier(name);
  const typed = TYPED[type];
  if (typed) return { name, type: typed(), sql: quoted, kind: 'typed' };
  if (AS_DOUBLE.has(type)) {
    return {
      name,
      type: new Float64(),
      sql: `CAST(${quoted} AS DOUBLE) AS ${quoted}`,
      kind: 'typed',
    };
  }
  if (type === DuckDBTypeId.BOOLEAN) return { name, type: new Bool(), sql: quoted, kind: 'bool' };
  if (type === DuckDBTypeId.DATE) return { name, type: new DateDay(), sql: quoted, kind: 'date' };
  if (TIMESTAMPS.has(type)) {
    return {
      name,
      type: new Timestamp(TimeUnit.MICROSECOND),
      sql: `epoch_us(CAST(${quoted} AS TIMESTAMP)) AS ${quoted}`,
      kind: 'typed',
    };
  }
  if (type === DuckDBTypeId.TIMESTAMP_TZ) {
    return {
      name,
      type: new Timestamp(TimeUnit.MICROSECOND, 'UTC'),
      sql: `epoch_us(${quoted}) AS ${quoted}`,
      kind: 'typed',
    };
  }
  // Text, and what Arrow would need a type of its own for (times, intervals, lists, structs): as text.
  return { name, type: new Utf8(), sql: `CAST(${quoted} AS VARCHAR) AS ${quoted}`, kind: 'utf8' };
}

/** A copy of `bytes` (the chunk's memory is DuckDB's, and is reused once the next chunk is fetched). */
function copied(bytes: Uint8Array): Uint8Array {
  return bytes.slice();
}

/**
 * The Arrow validity bitmap of a vector and its NULL count. DuckDB keeps validity as 64-bit words whose
 * bits, least significant first, say which rows are valid: on a little-endian machine that is Arrow's
 * bitmap byte for byte. No bitmap means every row is valid.
 */
function validityOf(vector: duckdb.Vector, length: number): { bitmap: Uint8Array; nulls: number } {
  const words = Math.ceil(length / 64);
  const bits = duckdb.vector_get_validity(vector, words * 8) as Uint8Array | null;
  if (!bits) return { bitmap: new Uint8Array(0), nulls: 0 };
  const bitmap = copied(bits.subarray(0, (length + 7) >> 3));
  let valid = 0;
  for (let row = 0; row < length; row++) valid += (bitmap[row >> 3] >> (row & 7)) & 1;
  return { bitmap, nulls: length - valid };
}

/**
 * One column of one chunk as Arrow data, read from DuckDB's vector memory through the driver's bindings
 * (`@duckdb/node-bindings`, the C API node-api is built on) rather than value by value: numbers, dates and
 * timestamps have the same binary form in both and are copied whole; text is copied as UTF-8 bytes,
 * never decoded. Going value by value through node-api's `getItem` (decoding each text to a JavaScript
 * string and encoding it back) took 3.3 s for 1,000,000 nine-column rows here, most of it in the
 * decoding and the validity checks.
 */
function columnData(column: ArrowColumn, vector: duckdb.Vector, length: number) {
  const { bitmap, nulls } = validityOf(vector, length);
  const props = { type: column.type, length, nullCount: nulls, nullBitmap: bitmap };
  switch (column.kind) {
    case 'typed': {
      const width = (column.type.ArrayType as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
      const bytes = copied(duckdb.vector_get_data(vector, length * width));
      const ArrayType = column.type.ArrayType as new (
        buffer: ArrayBuffer,
        offset: number,
        length: number,
      ) => ArrayBufferView;
      return makeData({
        ...props,
        data: new ArrayType(bytes.buffer as ArrayBuffer, 0, length),
      } as never);
    }
    case 'date': {
      const bytes = copied(duckdb.vector_get_data(vector, length * 4));
      return makeData({
        ...props,
        data: new Int32Array(bytes.buffer as ArrayBuffer, 0, length),
      } as never);
    }
    case 'bool': {
      // DuckDB keeps a byte per boolean; Arrow a bit.
      const bytes = duckdb.vector_get_data(vector, length);
      const values = new Uint8Array((length + 7) >> 3);
      for (let row = 0; row < length; row++) if (bytes[row]) values[row >> 3] |= 1 << (row & 7);
      return makeData({ ...props, data: values } as never);
    }
    case 'utf8': {
      // A DuckDB string is 16 bytes: its length, then the text itself when it fits in 12 bytes, else a
      // 4-byte prefix and a pointer to it (DuckDB's string_t).
      const entries = duckdb.vector_get_data(vector, length * 16);
      const view = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
      const offsets = new Int32Array(length + 1);
      let bytes = new Uint8Array(Math.max(length * 16, 1024));
      let end = 0;
      for (let row = 0; row < length; row++) {
        const at = row * 16;
        const size = view.getUint32(at, true);
        if (size > 0 && (bitmap.length === 0 || (bitmap[row >> 3] >> (row & 7)) & 1)) {
          if (end + size > bytes.length) {
            const grown = new Uint8Array(Math.max(bytes.length * 2, end + size));
            grown.set(bytes.subarray(0, end));
            bytes = grown;
          }
          if (size <= 12) {
            // Byte by byte: a view per short string cost more than the copy (a fifth of the time).
            for (let index = 0; index < size; index++) bytes[end + index] = entries[at + 4 + index];
          } else {
            bytes.set(
              duckdb.get_data_from_pointer(
                entries.buffer as ArrayBuffer,
                entries.byteOffset + at + 8,
                size,
              ),
              end,
            );
          }
          end += size;
        }
        offsets[row + 1] = end;
      }
      return makeData({ ...props, valueOffsets: offsets, data: bytes.subarray(0, end) } as never);
    }
  }
}

function emptyBatch(schema: Schema): RecordBatch {
  // makeData's overloads want a concrete type: each field's is only known as a DataType here.
  const children = schema.fields.map(
    (field) => makeData({ type: field.type as Utf8, length: 0 }) as Data,
  );
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: 0, nullCount: 0, children }),
  );
}

function recordBatch(schema: Schema, columns: ArrowColumn[], chunk: DuckDBDataChunk): RecordBatch {
  const length = chunk.rowCount;
  const children = columns.map((column, index) =>
    columnData(column, duckdb.data_chunk_get_vector(chunk.chunk, index), length),
  );
  const data = makeData({ type: new Struct(schema.fields), length, nullCount: 0, children });
  return new RecordBatch(schema, data);
}

/**
 * A query's rows as an Arrow IPC stream (`application/vnd.apache.arrow.stream`), one record batch per
 * DuckDB chunk, read only as fast as the client takes them (apache-arrow's Node stream writer). DuckDB has
 * no Arrow writer of its own here (its `arrow` extension cannot be installed), so the values cross into
 * JavaScript, but as whole columns: numbers are copied, not turned into JSON. Selections stay bound values.
 * The stream ends the statement and closes `connection` (through `done`, told the rows sent) however it
 * ends.
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
  let rows = 0;
  async function* batches(): AsyncGenerator<RecordBatch> {
    try {
      const probe = await timed(() => connection.prepare(`SELECT * FROM (\n${sql}\n)`));
      let all: ArrowColumn[];
      try {
        if (probe.statementType !== StatementType.SELECT) {
          throw new NotAQueryError('only queries (SELECT) may be exported');
        }
        all = [];
        for (let index = 0; index < probe.columnCount; index++) {
          all.push(arrowColumn(probe.columnName(index), probe.columnTypeId(index)));
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
      // One chunk ahead: DuckDB works on the next chunk while this one is copied into Arrow's buffers.
      let next: Promise<DuckDBDataChunk | null> | undefined;
      try {
        const { values, types } = duckdbParameters(binds);
        prepared.bind(values, types);
        const result = await timed(() => prepared.stream());
        let sent = false;
        const fetch = (): Promise<DuckDBDataChunk | null> => {
          const fetched = timed(() => result.fetchChunk());
          // Left unread when the stream stops early; awaited (and so reported) otherwise.
          fetched.catch(() => undefined);
          return fetched;
        };
        next = fetch();
        for (;;) {
          const chunk = await next;
          if (!chunk || chunk.rowCount === 0) break;
          next = fetch();
          sent = true;
          rows += chunk.rowCount;
          yield recordBatch(schema, columns, chunk);
        }
        // A result without rows still has its schema.
        if (!sent) yield emptyBatch(schema);
      } finally {
        // The statement is not destroyed under a fetch still running.
        await next?.catch(() => undefined);
        prepared.destroySync();
      }
    } finally {
      done(rows);
    }
  }
  // apache-arrow's Node writer must not be destroyed with an error: its queue then rejects a read nobody
  // awaits, an unhandled rejection that ends the process (apache-arrow 21.2). It is always ended, and a
  // failure is given to the stream the reply reads, which it feeds.
  const writer = RecordBatchStreamWriter.throughNode({ autoDestroy: true });
  const out = new PassThrough();
  writer.pipe(out);
  out.once('close', () => writer.unpipe(out));
  const ready = (): Promise<void> =>
    new Promise((resolve) => {
      const go = (): void => {
        writer.off('drain', go);
        out.off('close', go);
        resolve();
      };
      writer.once('drain', go);
      out.once('close', go);
    });
  void (async () => {
    try {
      for await (const batch of batches()) {
        if (out.destroyed) break;
        if (!writer.write(batch)) await ready();
        if (out.destroyed) break;
      }
    } catch (error) {
      writer.unpipe(out);
      out.destroy(error as Error);
    }
    writer.end();
  })();
  return out;
}
