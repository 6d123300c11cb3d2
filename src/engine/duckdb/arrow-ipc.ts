import { Message, Schema } from 'apache-arrow';
import {
  BufferRegion,
  FieldNode,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';

/**
 * Arrow's IPC stream format (https://arrow.apache.org/docs/format/Columnar.html#ipc-streaming-format):
 * each message is a continuation marker, the length of its flatbuffer metadata, the metadata padded to 8
 * bytes, then its body, every buffer of which starts at a multiple of 8. The metadata is encoded by
 * apache-arrow (its `Message`, the one its own writer uses); the framing and the body are ours, so that a
 * record batch is written straight into the one Buffer that is sent.
 */

/** Body buffers start at multiples of this (the format's minimum; apache-arrow's writer uses it too). */
export const BODY_ALIGNMENT = 8;

/** `bytes` rounded up to {@link BODY_ALIGNMENT}. */
export function padded(bytes: number): number {
  return Math.ceil(bytes / BODY_ALIGNMENT) * BODY_ALIGNMENT;
}

/** The continuation marker and a zero length: the end of the stream. */
export const END_OF_STREAM: Buffer = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** One column of a record batch: its row and NULL counts, and the lengths of its buffers in order. */
export interface ColumnLayout {
  nullCount: number;
  /** Byte lengths of the column's buffers (validity first, 0 when it has no NULLs), unpadded. */
  buffers: number[];
}

/** A record batch's message, with its body zeroed and where each buffer of each column starts in it. */
export interface RecordBatchMessage {
  bytes: Buffer;
  /** Per column, per buffer: the offset in {@link bytes} where that buffer starts. */
  starts: number[][];
}

/**
 * The schema message, the first of a stream. apache-arrow's reader requires it before any batch.
 */
export function schemaMessage(schema: Schema): Buffer {
  const metadata = Message.encode(Message.from(schema));
  const bytes = Buffer.alloc(framedLength(metadata));
  writeFrame(bytes, metadata);
  return bytes;
}

/**
 * A record batch of `rows` rows with the given columns: its framed metadata followed by a zeroed body with
 * room for every buffer (padded), for the caller to fill in at {@link RecordBatchMessage.starts}. The
 * padding stays zero, so no memory from earlier allocations is sent.
 */
export function recordBatchMessage(rows: number, columns: ColumnLayout[]): RecordBatchMessage {
  const nodes: FieldNode[] = [];
  const regions: BufferRegion[] = [];
  const relative: number[][] = [];
  let bodyLength = 0;
  for (const column of columns) {
    nodes.push(new FieldNode(rows, column.nullCount));
    const starts: number[] = [];
    for (const length of column.buffers) {
      regions.push(new BufferRegion(bodyLength, length));
      starts.push(bodyLength);
      bodyLength += padded(length);
    }
    relative.push(starts);
  }
  const header = new RecordBatchHeader(rows, nodes, regions, null);
  const metadata = Message.encode(Message.from(header, bodyLength));
  const bodyStart = framedLength(metadata);
  const bytes = Buffer.alloc(bodyStart + bodyLength);
  writeFrame(bytes, metadata);
  return { bytes, starts: relative.map((starts) => starts.map((start) => bodyStart + start)) };
}

/** Continuation marker, metadata length, metadata: padded so that the body starts 8-byte aligned. */
function framedLength(metadata: Uint8Array): number {
  return 8 + padded(metadata.byteLength);
}

function writeFrame(bytes: Buffer, metadata: Uint8Array): void {
  bytes.writeUInt32LE(0xffffffff, 0);
  bytes.writeInt32LE(padded(metadata.byteLength), 4);
  bytes.set(metadata, 8);
}
