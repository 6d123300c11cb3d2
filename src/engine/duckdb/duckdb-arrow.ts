import { PassThrough, Readable } from 'node:stream';
import {
  AsyncByteQueue,
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
import { CHUNKS_PER_COLLECTION, collectYoungChunks } from '@/engine/duckdb/native-memory';
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

/**
 * Rows gathered from DuckDB's chunks (2,048 rows each) into one record batch. Each record batch costs
 * apache-arrow's writer a message, a flatbuffer and a pass over every buffer, and the reader as much
 * again: one batch per chunk spent more time there than in copying the values (1,000,000 rows, 489
 * batches). 32 chunks a batch make that cost negligible while a batch stays a few megabytes.
 */
export const ARROW_BATCH_ROWS = 65_536;
/** Text bytes after which a batch is sent early, so that long strings do not make a batch huge. */
export const ARROW_BATCH_TEXT_BYTES = 16 * 1024 * 1024;

/** Set bits of every byte value: the valid rows of 8 rows of a validity bitmap. */
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let count = 0;
  for (let bit = byte; bit; bit >>= 1) count += bit & 1;
  return count;
});

/**
 * One column of a batch being gathered. Each chunk's vector is appended into buffers sized for a whole
 * batch: fixed-width values and validity bits are copied whole from DuckDB's memory (they have Arrow's
 * binary form, least significant bit first on a little-endian machine), text as UTF-8 bytes, never
 * decoded. Going value by value through node-api's `getItem` (decoding each text to a JavaScript string
 * and encoding it back) took 3.3 s for 1,000,000 nine-column rows here. The buffers serve every batch
 * of an export ({@link reset}), once the previous batch's bytes have been copied out.
 */
class ColumnBuilder {
  private rows = 0;
  private nulls = 0;
  /** Allocated at the first NULL: a batch without NULLs sends no bitmap. */
  private validity = new Uint8Array(0);
  /** Whether {@link validity} holds this batch's bits (else it is left from an earlier batch). */
  private hasNulls = false;
  private values: Uint8Array;
  private typed: ArrayBufferView | undefined;
  private offsets: Int32Array | undefined;
  /** Bytes per value (fixed-width columns). */
  private readonly width: number;
  textBytes = 0;

  constructor(
    private readonly column: ArrowColumn,
    private readonly capacity: number,
  ) {
    if (column.kind === 'typed' || column.kind === 'date') {
      const ArrayType = column.type.ArrayType as new (length: number) => ArrayBufferView;
      this.typed = new ArrayType(capacity);
      this.width = this.typed.byteLength / capacity;
      this.values = new Uint8Array(this.typed.buffer, 0, this.typed.byteLength);
    } else if (column.kind === 'bool') {
      this.width = 0;
      this.values = new Uint8Array((capacity + 7) >> 3);
    } else {
      this.width = 0;
      this.offsets = new Int32Array(capacity + 1);
      this.values = new Uint8Array(Math.min(capacity * 16, 1 << 20));
    }
  }

  append(vector: duckdb.Vector, length: number): void {
    const at = this.rows;
    const bits = duckdb.vector_get_validity(vector, ((length + 63) >> 6) * 8) as Uint8Array | null;
    if (bits) this.appendValidity(bits, at, length);
    switch (this.column.kind) {
      case 'typed':
      case 'date':
        this.values.set(duckdb.vector_get_data(vector, length * this.width), at * this.width);
        break;
      case 'bool':
        this.appendBooleans(duckdb.vector_get_data(vector, length), at, length);
        break;
      case 'utf8':
        this.appendText(vector, bits, at, length);
        break;
    }
    this.rows += length;
  }

  /** The chunk's validity bits at row `at` of the batch; only a chunk with NULLs costs a loop. */
  private appendValidity(bits: Uint8Array, at: number, length: number): void {
    const bytes = length >> 3;
    let valid = 0;
    for (let index = 0; index < bytes; index++) valid += BITS_SET[bits[index]];
    for (let row = bytes << 3; row < length; row++) valid += (bits[row >> 3] >> (row & 7)) & 1;
    if (valid === length) return;
    this.nulls += length - valid;
    if (!this.hasNulls) {
      // Every row before this chunk was valid.
      if (this.validity.length === 0) this.validity = new Uint8Array((this.capacity + 7) >> 3);
      this.validity.fill(0xff);
      this.hasNulls = true;
    }
    const target = this.validity;
    if ((at & 7) === 0) {
      target.set(bits.subarray(0, (length + 7) >> 3), at >> 3);
    } else {
      // A chunk of DuckDB's may hold fewer than 2,048 rows: the next one starts within a byte.
      for (let row = 0; row < length; row++) {
        const to = at + row;
        if (!((bits[row >> 3] >> (row & 7)) & 1)) target[to >> 3] &= ~(1 << (to & 7));
      }
    }
    // Bits past the chunk's end stay set: the next chunk's rows are valid unless it says otherwise.
    const end = at + length;
    if (end & 7) target[end >> 3] |= 0xff << (end & 7);
  }

  /** DuckDB keeps a byte per boolean; Arrow a bit. */
  private appendBooleans(bytes: Uint8Array, at: number, length: number): void {
    const values = this.values;
    for (let row = 0; row < length; row++) {
      if (bytes[row]) values[(at + row) >> 3] |= 1 << ((at + row) & 7);
    }
  }

  /**
   * A DuckDB string is 16 bytes: its length, then the text itself when it fits in 12 bytes, else a 4-byte
   * prefix and a pointer to it (DuckDB's string_t). Arrow's is an offset per row into one byte buffer, so
   * this is the one per-row loop; a NULL's entry is garbage and is skipped.
   */
  private appendText(vector: duckdb.Vector, bits: Uint8Array | null, at: number, length: number) {
    const entries = duckdb.vector_get_data(vector, length * 16);
    const sizes =
      (entries.byteOffset & 3) === 0
        ? new Uint32Array(entries.buffer, entries.byteOffset, length * 4)
        : undefined;
    const view = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
    const offsets = this.offsets!;
    let bytes = this.values;
    let end = offsets[at];
    for (let row = 0; row < length; row++) {
      const entry = row * 16;
      const size = sizes ? sizes[row * 4] : view.getUint32(entry, true);
      if (size > 0 && (!bits || (bits[row >> 3] >> (row & 7)) & 1)) {
        if (end + size > bytes.length) {
          const grown = new Uint8Array(Math.max(bytes.length * 2, end + size));
          grown.set(bytes.subarray(0, end));
          this.values = bytes = grown;
        }
        if (size <= 12) {
          // Byte by byte: a view per short string cost more than the copy (a fifth of the time).
          for (let index = 0; index < size; index++)
            bytes[end + index] = entries[entry + 4 + index];
        } else {
          bytes.set(
            duckdb.get_data_from_pointer(
              entries.buffer as ArrayBuffer,
              entries.byteOffset + entry + 8,
              size,
            ),
            end,
          );
        }
        end += size;
      }
      offsets[at + row + 1] = end;
    }
    this.textBytes = end;
  }

  /** Empty again, for the next batch; the previous one's bytes must have been copied out. */
  reset(): void {
    this.rows = 0;
    this.nulls = 0;
    this.hasNulls = false;
    this.textBytes = 0;
    if (this.column.kind === 'bool') this.values.fill(0);
  }

  /** The column's data for the batch, over the builder's buffers: valid until {@link reset}. */
  data(): Data {
    const length = this.rows;
    const props = {
      type: this.column.type,
      length,
      nullCount: this.nulls,
      nullBitmap: this.hasNulls ? this.validity.subarray(0, (length + 7) >> 3) : new Uint8Array(0),
    };
    switch (this.column.kind) {
      case 'typed':
      case 'date': {
        const ArrayType = this.column.type.ArrayType as new (
          buffer: ArrayBuffer,
          offset: number,
          length: number,
        ) => ArrayBufferView;
        return makeData({
          ...props,
          data: new ArrayType(this.typed!.buffer as ArrayBuffer, 0, length),
        } as never);
      }
      case 'bool':
        return makeData({ ...props, data: this.values.subarray(0, (length + 7) >> 3) } as never);
      case 'utf8':
        return makeData({
          ...props,
          valueOffsets: this.offsets!.subarray(0, length + 1),
          data: this.values.subarray(0, this.textBytes),
        } as never);
    }
  }
}

/** Chunks gathered into one record batch of up to {@link ARROW_BATCH_ROWS} rows. */
class BatchBuilder {
  rows = 0;
  private readonly builders: ColumnBuilder[];

  constructor(
    private readonly schema: Schema,
    columns: ArrowColumn[],
  ) {
    this.builders = columns.map((column) => new ColumnBuilder(column, ARROW_BATCH_ROWS));
  }

  /** Whether another chunk of DuckDB's would fit. */
  get full(): boolean {
    if (this.rows + duckdb.vector_size() > ARROW_BATCH_ROWS) return true;
    let text = 0;
    for (const builder of this.builders) text += builder.textBytes;
    return text >= ARROW_BATCH_TEXT_BYTES;
  }

  append(chunk: DuckDBDataChunk): void {
    const length = chunk.rowCount;
    for (let index = 0; index < this.builders.length; index++) {
      this.builders[index].append(duckdb.data_chunk_get_vector(chunk.chunk, index), length);
    }
    this.rows += length;
  }

  /** The rows gathered, over the builders' buffers: valid until {@link reset}. */
  batch(): RecordBatch {
    const children = this.builders.map((builder) => builder.data());
    const data = makeData({
      type: new Struct(this.schema.fields),
      length: this.rows,
      nullCount: 0,
      children,
    });
    return new RecordBatch(this.schema, data);
  }

  reset(): void {
    for (const builder of this.builders) builder.reset();
    this.rows = 0;
  }
}

/**
 * Bytes of a batch the reply may hold besides the one being gathered: the next batch is built while
 * the client reads this one.
 */
const ARROW_OUT_HIGH_WATER = 8 * 1024 * 1024;

/** A sink for apache-arrow's writer that keeps what it is given until {@link take}n, synchronously. */
class CollectedBytes extends AsyncByteQueue {
  private pieces: Uint8Array[] = [];
  private bytes = 0;

  override write(value: Uint8Array): void {
    // The writer hands its sink Uint8Arrays only (its `_write` converts first).
    if (value.byteLength === 0) return;
    this.pieces.push(value);
    this.bytes += value.byteLength;
  }

  /** A copy of everything written since the last call. */
  take(): Buffer {
    const bytes = Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    return bytes;
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

/**
 * A query's rows as an Arrow IPC stream (`application/vnd.apache.arrow.stream`), a record batch per
 * {@link ARROW_BATCH_ROWS} rows (the last one shorter), read only as fast as the client takes them (apache-arrow's Node stream writer). DuckDB has
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
        let builder: BatchBuilder | undefined;
        let chunks = 0;
        for (;;) {
          const chunk = await next;
          if (!chunk || chunk.rowCount === 0) break;
          next = fetch();
          builder ??= new BatchBuilder(schema, columns);
          builder.append(chunk);
          rows += chunk.rowCount;
          // The chunk's native memory goes only when V8 finalises its wrapper (see native-memory.ts);
          // its values are copied and it is let go of at once, so a scavenge finds it.
          if (++chunks % CHUNKS_PER_COLLECTION === 0) collectYoungChunks();
          if (builder.full) {
            sent = true;
            // Written (copied out) before the generator resumes.
            yield builder.batch();
            builder.reset();
          }
        }
        if (builder && builder.rows > 0) {
          sent = true;
          yield builder.batch();
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
  // apache-arrow's writer serialises each batch into a sink that keeps its pieces (message, buffers,
  // padding), copied at once into one Buffer: the builders' buffers are then free for the next batch,
  // and the reply gets one chunk per batch. Its Node stream (`throughNode`) handed them on 16 KB at a time
  // through a promise each, some 4,000 chunks through three streams for 64 MB.
  const sink = new CollectedBytes();
  const writer = new RecordBatchStreamWriter();
  writer.reset(sink);
  const out = new PassThrough({ writableHighWaterMark: ARROW_OUT_HIGH_WATER });
  const ready = (): Promise<void> =>
    new Promise((resolve) => {
      const go = (): void => {
        out.off('drain', go);
        out.off('close', go);
        resolve();
      };
      out.once('drain', go);
      out.once('close', go);
    });
  void (async () => {
    try {
      for await (const batch of batches()) {
        if (out.destroyed) break;
        writer.write(batch);
        if (!out.write(sink.take())) await ready();
        if (out.destroyed) break;
      }
      if (!out.destroyed) {
        // The end-of-stream marker.
        writer.finish();
        out.end(sink.take());
      }
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return out;
}
