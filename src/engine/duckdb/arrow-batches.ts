import { DataType } from 'apache-arrow';
import { DuckDBDataChunk } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { ColumnLayout, recordBatchMessage } from '@/engine/duckdb/arrow-ipc';

/**
 * How a DuckDB column becomes an Arrow one: the types Arrow and DuckDB share keep their binary form, and
 * the query casts what Arrow has no type for to text, so that the JavaScript side only copies numbers and
 * text bytes, and widens integers (decimals held in fewer bytes than Arrow's 16, huge integers to 32).
 */
export interface ArrowColumn {
  name: string;
  type: DataType;
  /** The column's expression in the projection. */
  sql: string;
  /**
   * How its values are copied from a chunk's vector: `fixed` as they are ({@link width} bytes each, the
   * same in both), `bool` from a byte to a bit each, `utf8` from DuckDB's strings to offsets and bytes,
   * `int128` and `uint128` from DuckDB's 16 bytes to 32 (a Decimal256), the upper half the sign's,
   * `decimal` from DuckDB's {@link sourceWidth} bytes to 16 (a Decimal128), sign-extended.
   */
  kind: 'fixed' | 'bool' | 'utf8' | 'int128' | 'uint128' | 'decimal';
  width: number;
  /**
   * `decimal`: the bytes of a value in DuckDB's vector, 2, 4 or 8 (DuckDB keeps a DECIMAL of up to 4, 9 or
   * 18 digits as a 16-, 32- or 64-bit integer), widened as they are copied rather than by a cast in the
   * query, which DuckDB runs value by value in 128-bit arithmetic.
   */
  sourceWidth?: 2 | 4 | 8;
}

/**
 * Rows gathered from DuckDB's chunks (2,048 rows each) into one record batch: 8 chunks, about 1 MB of
 * bench/project's orders. V8 counts the views of a batch's chunks and the batch's bytes (until the reader
 * has them) as external memory, and counts what it has grown by since the last full collection against
 * the old generation's limit; with the server's small heap that limit leaves little, and a batch must stay
 * well under it, or one full collection leads to the next, often for the rest of the export. The message of
 * a batch costs a flatbuffer here, and apache-arrow's reader as much again, so batches are not made
 * smaller than needed (see docs/performance.md, "Figures behind the code", "Arrow batch size").
 */
export const ARROW_BATCH_ROWS = 16_384;
/**
 * Text bytes after which a batch is sent early, so that long strings do not make a batch large (each
 * string over 12 bytes is a view of its own, which V8 counts too).
 */
export const ARROW_BATCH_TEXT_BYTES = 4 * 1024 * 1024;

/** Set bits of every byte value: the valid rows of 8 rows of a validity bitmap. */
const BITS_SET = Uint8Array.from({ length: 256 }, (_, byte) => {
  let count = 0;
  for (let bit = byte; bit; bit >>= 1) count += bit & 1;
  return count;
});

/** One column of one chunk, as DuckDB holds it: views of the chunk's memory, valid while it is. */
interface ColumnPiece {
  data: Uint8Array;
  /** The chunk's validity bits, or null when every row is valid. */
  validity: Uint8Array | null;
  nulls: number;
  /** Bytes of the valid rows' text (utf8 columns). */
  textBytes: number;
}

interface PendingChunk {
  /** Held so that DuckDB keeps the memory the pieces view. */
  chunk: DuckDBDataChunk;
  rows: number;
  pieces: ColumnPiece[];
}

/**
 * Chunks gathered into one record batch, written straight into the message that is sent. A chunk's
 * vectors are only looked at when it comes (the NULLs counted, the text measured), and copied once the
 * batch is complete, when every buffer's size is known: fixed-width values and validity bits whole from
 * DuckDB's memory (they have Arrow's binary form, least significant bit first on a little-endian
 * machine), text as UTF-8 bytes, never decoded. So no buffer outlives the batch it was made for: buffers
 * kept from one batch to the next move to V8's old generation, where only full collections free them, and
 * bring such collections over and over (see docs/performance.md, "Figures behind the code", "Arrow batch
 * size").
 */
export class RecordBatchAssembler {
  rows = 0;
  private textBytes = 0;
  private pending: PendingChunk[] = [];

  constructor(private readonly columns: ArrowColumn[]) {}

  /** Whether another chunk of DuckDB's would not fit. */
  get full(): boolean {
    return (
      this.rows + duckdb.vector_size() > ARROW_BATCH_ROWS ||
      this.textBytes >= ARROW_BATCH_TEXT_BYTES
    );
  }

  add(chunk: DuckDBDataChunk): void {
    const rows = chunk.rowCount;
    const pieces = this.columns.map((column, index) => {
      const vector = duckdb.data_chunk_get_vector(chunk.chunk, index);
      const validity = duckdb.vector_get_validity(
        vector,
        ((rows + 63) >> 6) * 8,
      ) as Uint8Array | null;
      const nulls = validity ? rows - validCount(validity, rows) : 0;
      const width = sourceWidth(column);
      const data = duckdb.vector_get_data(vector, rows * width);
      const piece: ColumnPiece = { data, validity, nulls, textBytes: 0 };
      if (column.kind === 'utf8') {
        piece.textBytes = textBytes(data, validity, rows);
        this.textBytes += piece.textBytes;
      }
      return piece;
    });
    this.pending.push({ chunk, rows, pieces });
    this.rows += rows;
  }

  /** The batch's message, every chunk copied into it; the assembler is then empty again. */
  take(): Buffer {
    const layouts = this.columns.map((column, index) => this.layout(column, index));
    const { bytes, starts } = recordBatchMessage(this.rows, layouts);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.columns.forEach((column, index) => {
      const layout = layouts[index];
      const [validity, data, text] = starts[index];
      // Offsets, then bytes, for text; the first offset stays the zero it was allocated as.
      const strings: TextTarget | undefined =
        column.kind === 'utf8'
          ? { bytes, view, offsetsStart: data, textStart: text, textEnd: text + layout.buffers[2] }
          : undefined;
      let at = 0;
      let textAt = 0;
      for (const { rows, pieces } of this.pending) {
        const piece = pieces[index];
        if (layout.nullCount > 0) copyBits(bytes, validity, at, piece.validity, rows);
        switch (column.kind) {
          case 'fixed':
            bytes.set(piece.data, data + at * column.width);
            break;
          case 'bool':
            packBooleans(bytes, data, at, piece.data, rows);
            break;
          case 'utf8':
            textAt = copyText(strings!, at, textAt, piece, rows);
            break;
          case 'int128':
          case 'uint128':
            widen(bytes, data + at * column.width, piece.data, rows, column.kind === 'int128');
            break;
          case 'decimal':
            extendDecimals(view, data + at * 16, piece.data, rows, column.sourceWidth!);
            break;
        }
        at += rows;
      }
    });
    this.pending = [];
    this.rows = 0;
    this.textBytes = 0;
    return bytes;
  }

  private layout(column: ArrowColumn, index: number): ColumnLayout {
    let nullCount = 0;
    let text = 0;
    for (const { pieces } of this.pending) {
      nullCount += pieces[index].nulls;
      text += pieces[index].textBytes;
    }
    const rows = this.rows;
    const validity = nullCount > 0 ? (rows + 7) >> 3 : 0;
    switch (column.kind) {
      case 'fixed':
      case 'int128':
      case 'uint128':
      case 'decimal':
        return { nullCount, buffers: [validity, rows * column.width] };
      case 'bool':
        return { nullCount, buffers: [validity, (rows + 7) >> 3] };
      case 'utf8':
        return { nullCount, buffers: [validity, (rows + 1) * 4, text] };
    }
  }
}

/** Bytes of a value in DuckDB's vector: a string's entry is 16, a boolean 1, a huge integer 16. */
function sourceWidth(column: ArrowColumn): number {
  switch (column.kind) {
    case 'utf8':
    case 'int128':
    case 'uint128':
      return 16;
    case 'bool':
      return 1;
    case 'decimal':
      return column.sourceWidth!;
    case 'fixed':
      return column.width;
  }
}

/**
 * `rows` decimals held in 2, 4 or 8 bytes (`from`) to 16 bytes each at `start` of `target`'s bytes, least
 * significant word first, the words above the value's all its sign. A NULL's bytes are copied as they are,
 * never read.
 */
function extendDecimals(
  target: DataView,
  start: number,
  source: Uint8Array,
  rows: number,
  from: 2 | 4 | 8,
): void {
  const values = new DataView(source.buffer, source.byteOffset, rows * from);
  for (let row = 0, to = start; row < rows; row++, to += 16) {
    const low =
      from === 8
        ? values.getInt32(row * 8, true)
        : from === 4
          ? values.getInt32(row * 4, true)
          : values.getInt16(row * 2, true);
    const high = from === 8 ? values.getInt32(row * 8 + 4, true) : low >> 31;
    const sign = high >> 31;
    target.setInt32(to, low, true);
    target.setInt32(to + 4, high, true);
    target.setInt32(to + 8, sign, true);
    target.setInt32(to + 12, sign, true);
  }
}

/**
 * `rows` 128-bit integers (DuckDB's hugeint_t: the lower 64 bits, then the upper, least significant byte
 * first) to 256-bit ones at `start` of `target`, whose bytes are still zero: the upper 16 bytes of a
 * negative (signed) value all ones. A NULL's bytes are copied as they are, never read.
 */
function widen(
  target: Uint8Array,
  start: number,
  source: Uint8Array,
  rows: number,
  signed: boolean,
): void {
  for (let row = 0; row < rows; row++) {
    const from = row * 16;
    const to = start + row * 32;
    target.set(source.subarray(from, from + 16), to);
    if (signed && source[from + 15] & 0x80) target.fill(0xff, to + 16, to + 32);
  }
}

/** Valid rows among the first `rows` of a validity bitmap. */
function validCount(bits: Uint8Array, rows: number): number {
  const bytes = rows >> 3;
  let valid = 0;
  for (let index = 0; index < bytes; index++) valid += BITS_SET[bits[index]];
  for (let row = bytes << 3; row < rows; row++) valid += (bits[row >> 3] >> (row & 7)) & 1;
  return valid;
}

/**
 * `rows` bits of `source` (all set when null) to bit `at` of the bitmap at `start` of `target`, whose
 * bits from `at` on are still zero. A chunk of DuckDB's may hold fewer than 2,048 rows: the next one
 * then starts within a byte.
 */
function copyBits(
  target: Uint8Array,
  start: number,
  at: number,
  source: Uint8Array | null,
  rows: number,
): void {
  if (!source) {
    let row = at;
    const end = at + rows;
    for (; row < end && row & 7; row++) target[start + (row >> 3)] |= 1 << (row & 7);
    const whole = (end - row) >> 3;
    target.fill(0xff, start + (row >> 3), start + (row >> 3) + whole);
    for (row += whole << 3; row < end; row++) target[start + (row >> 3)] |= 1 << (row & 7);
    return;
  }
  if ((at & 7) === 0) {
    const whole = rows >> 3;
    target.set(source.subarray(0, whole), start + (at >> 3));
    // The bits past the chunk's last row are left zero for the next chunk.
    if (rows & 7) target[start + (at >> 3) + whole] = source[whole] & ((1 << (rows & 7)) - 1);
    return;
  }
  for (let row = 0; row < rows; row++) {
    if ((source[row >> 3] >> (row & 7)) & 1) {
      const to = at + row;
      target[start + (to >> 3)] |= 1 << (to & 7);
    }
  }
}

/** DuckDB keeps a byte per boolean; Arrow a bit. */
function packBooleans(
  target: Uint8Array,
  start: number,
  at: number,
  bytes: Uint8Array,
  rows: number,
): void {
  for (let row = 0; row < rows; row++) {
    if (bytes[row]) target[start + ((at + row) >> 3)] |= 1 << ((at + row) & 7);
  }
}

/**
 * A DuckDB string is 16 bytes: its length, then the text itself when it fits in 12 bytes, else a 4-byte
 * prefix and a pointer to it (DuckDB's string_t); as 32-bit words, row r's length is word 4r and its
 * inline text words 4r+1 to 4r+3. DuckDB's vectors are 8-byte aligned; a copy is taken otherwise.
 */
function stringEntries(entries: Uint8Array): Uint32Array {
  const aligned = (entries.byteOffset & 3) === 0 ? entries : entries.slice();
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 2);
}

/** Bytes of the valid rows' text (a NULL's entry is garbage). */
function textBytes(entries: Uint8Array, validity: Uint8Array | null, rows: number): number {
  const words = stringEntries(entries);
  let bytes = 0;
  for (let row = 0; row < rows; row++) {
    if (!validity || (validity[row >> 3] >> (row & 7)) & 1) bytes += words[row * 4];
  }
  return bytes;
}

/** Where a column's strings go in a batch's message. */
interface TextTarget {
  bytes: Buffer;
  /** The same bytes, for 32-bit writes at any offset. */
  view: DataView;
  offsetsStart: number;
  textStart: number;
  /** Where the column's text ends: the sum of its valid rows' lengths after {@link textStart}. */
  textEnd: number;
}

/**
 * A chunk's strings as Arrow's offsets (one per row, into the batch's text) and bytes, from row `at` and
 * byte `text` of the batch; the one per-row loop. Returns the batch's text bytes after the chunk's.
 */
function copyText(
  target: TextTarget,
  at: number,
  text: number,
  piece: ColumnPiece,
  rows: number,
): number {
  const { bytes, view, textStart, textEnd } = target;
  const validity = piece.validity;
  const words = stringEntries(piece.data);
  const entries = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  // Offsets start at a multiple of 8 in a Buffer of its own (byteOffset 0): aligned for an Int32Array.
  const offsets = new Int32Array(
    bytes.buffer,
    bytes.byteOffset + target.offsetsStart,
    at + rows + 1,
  );
  let end = text;
  for (let row = 0; row < rows; row++) {
    const length = words[row * 4];
    if (length > 0 && (!validity || (validity[row >> 3] >> (row & 7)) & 1)) {
      const to = textStart + end;
      if (length <= 12 && to + 12 <= textEnd) {
        // Whole words, past the string's end too: the strings after it overwrite those bytes, up to
        // textEnd. Faster than a byte-by-byte copy, and a view per short string cost more than either
        // (see docs/performance.md, "Figures behind the code", "Copying short strings").
        view.setUint32(to, words[row * 4 + 1], true);
        if (length > 4) view.setUint32(to + 4, words[row * 4 + 2], true);
        if (length > 8) view.setUint32(to + 8, words[row * 4 + 3], true);
      } else if (length <= 12) {
        for (let index = 0; index < length; index++)
          bytes[to + index] = entries[row * 16 + 4 + index];
      } else {
        bytes.set(
          duckdb.get_data_from_pointer(
            words.buffer as ArrayBuffer,
            words.byteOffset + row * 16 + 8,
            length,
          ),
          to,
        );
      }
      end += length;
    }
    offsets[at + row + 1] = end;
  }
  return end;
}
