import { constants, crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

/*
 * A zip file (PKWARE APPNOTE 6.3) made of small parts known in full and one large part streamed, written
 * as it is read: the parts of an Excel workbook.
 *
 * Our own rather than yazl's: yazl computes each entry's CRC-32 in JavaScript (buffer-crc32), a sizeable
 * part of an Excel export's CPU (see docs/performance.md, "Figures behind the code", "Writing Excel
 * exports"), and it cannot be handed a CRC. Here
 * Node's zlib does both, in native code: `crc32` (Node 20.15) and the deflating, on the thread pool. The
 * layout is yazl's: a streamed entry has flag bit 3, its CRC and sizes in a data descriptor after its
 * data, and ZIP64 records where a size or an offset passes 4 GiB (an export space may hold more than
 * that; checked once with a 16 GiB part, which Python's zipfile and Info-ZIP's unzip read and verified).
 */

/** One entry of the zip: a small text, or the large part's bytes. */
export interface ZipPart {
  name: string;
  /** A small part, deflated at once. */
  text?: string;
  /** The large part: its bytes, deflated as they come. Read once, in order, after the parts before it. */
  stream?: AsyncIterable<Buffer>;
}

/** Bytes of deflated output handed on at a time: fewer trips to the thread pool than zlib's 16 KiB. */
const CHUNK_BYTES = 128 * 1024;
/**
 * Deflate level 1: a worksheet's XML shrinks most of the way at level 1, and level 6 costs far more CPU for
 * little more (see docs/performance.md, "Figures behind the code", "Deflate level of Excel exports").
 */
const STREAM_DEFLATE = { level: 1, chunkSize: CHUNK_BYTES } as const;
const MAX32 = 0xffffffff;

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
  streamed: boolean;
}

/** The zip's bytes, part after part, then the central directory. Pull-driven: nothing is read ahead. */
export async function* zipParts(
  parts: readonly ZipPart[],
  now = new Date(),
): AsyncGenerator<Buffer> {
  const { time, date } = dosDateTime(now);
  const written: Written[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name, 'utf8');
    if (part.stream === undefined) {
      const data = Buffer.from(part.text ?? '', 'utf8');
      const deflated = deflateRawSync(data, { level: constants.Z_DEFAULT_COMPRESSION });
      const entry = {
        name,
        crc: crc32(data),
        compressed: deflated.length,
        size: data.length,
        offset,
        streamed: false,
      };
      const header = localHeader(entry, time, date);
      written.push(entry);
      offset += header.length + deflated.length;
      yield header;
      yield deflated;
      continue;
    }
    const entry = { name, crc: 0, compressed: 0, size: 0, offset, streamed: true };
    const header = localHeader(entry, time, date);
    offset += header.length;
    yield header;
    const deflate = createDeflateRaw(STREAM_DEFLATE);
    // The part's bytes go into deflate as deflate's output is taken: `write` waits for 'drain', so no more
    // than deflate's buffers (its highWaterMark each way) are held between the reader and the reply.
    const source = part.stream;
    const feeding = (async () => {
      try {
        for await (const chunk of source) {
          if (deflate.destroyed) return;
          entry.crc = crc32(chunk, entry.crc);
          entry.size += chunk.length;
          if (!deflate.write(chunk)) {
            await new Promise<void>((resolve, reject) => {
              const drained = (): void => {
                deflate.off('close', closed);
                resolve();
              };
              const closed = (): void => {
                deflate.off('drain', drained);
                reject(new Error('the deflating stopped'));
              };
              deflate.once('drain', drained);
              deflate.once('close', closed);
            });
          }
        }
        deflate.end();
      } catch (error) {
        deflate.destroy(error as Error);
      }
    })();
    try {
      for await (const chunk of deflate) {
        entry.compressed += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    } finally {
      // Ended early (the reader gone) or failed: the deflating stops, and with it the feeding, which then
      // returns from the source (the source's own cleanup runs there).
      deflate.destroy();
    }
    await feeding;
    offset += entry.compressed;
    const descriptor = dataDescriptor(entry);
    offset += descriptor.length;
    written.push(entry);
    yield descriptor;
  }
  const directory = Buffer.concat(written.map((entry) => centralRecord(entry, time, date)));
  yield directory;
  yield endRecords(written.length, directory.length, offset);
}

function localHeader(entry: Written, time: number, date: number): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  // UTF-8 names; a streamed entry's CRC and sizes come after its data.
  header.writeUInt16LE(0x0800 | (entry.streamed ? 0x0008 : 0), 6);
  header.writeUInt16LE(8, 8);
  header.writeUInt16LE(time, 10);
  header.writeUInt16LE(date, 12);
  header.writeUInt32LE(entry.streamed ? 0 : entry.crc, 14);
  header.writeUInt32LE(entry.streamed ? 0 : entry.compressed, 18);
  header.writeUInt32LE(entry.streamed ? 0 : entry.size, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  return Buffer.concat([header, entry.name]);
}

function needsZip64(entry: Written): boolean {
  return entry.size >= MAX32 || entry.compressed >= MAX32 || entry.offset >= MAX32;
}

function dataDescriptor(entry: Written): Buffer {
  if (!needsZip64(entry)) {
    const buffer = Buffer.alloc(16);
    buffer.writeUInt32LE(0x08074b50, 0);
    buffer.writeUInt32LE(entry.crc, 4);
    buffer.writeUInt32LE(entry.compressed, 8);
    buffer.writeUInt32LE(entry.size, 12);
    return buffer;
  }
  const buffer = Buffer.alloc(24);
  buffer.writeUInt32LE(0x08074b50, 0);
  buffer.writeUInt32LE(entry.crc, 4);
  buffer.writeBigUInt64LE(BigInt(entry.compressed), 8);
  buffer.writeBigUInt64LE(BigInt(entry.size), 16);
  return buffer;
}

function centralRecord(entry: Written, time: number, date: number): Buffer {
  const zip64 = needsZip64(entry);
  const record = Buffer.alloc(46);
  record.writeUInt32LE(0x02014b50, 0);
  // Made by: Unix, APPNOTE 6.3; needed: 2.0, or 4.5 for ZIP64.
  record.writeUInt16LE((3 << 8) | 63, 4);
  record.writeUInt16LE(zip64 ? 45 : 20, 6);
  record.writeUInt16LE(0x0800 | (entry.streamed ? 0x0008 : 0), 8);
  record.writeUInt16LE(8, 10);
  record.writeUInt16LE(time, 12);
  record.writeUInt16LE(date, 14);
  record.writeUInt32LE(entry.crc, 16);
  record.writeUInt32LE(zip64 ? MAX32 : entry.compressed, 20);
  record.writeUInt32LE(zip64 ? MAX32 : entry.size, 24);
  record.writeUInt16LE(entry.name.length, 28);
  record.writeUInt16LE(zip64 ? 28 : 0, 30);
  // Comment length, disk number, internal attributes: 0. External: a regular file, rw-rw-r--.
  record.writeUInt32LE((0o100664 << 16) >>> 0, 38);
  record.writeUInt32LE(zip64 ? MAX32 : entry.offset, 42);
  if (!zip64) return Buffer.concat([record, entry.name]);
  const extra = Buffer.alloc(28);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(24, 2);
  extra.writeBigUInt64LE(BigInt(entry.size), 4);
  extra.writeBigUInt64LE(BigInt(entry.compressed), 12);
  extra.writeBigUInt64LE(BigInt(entry.offset), 20);
  return Buffer.concat([record, entry.name, extra]);
}

/** The end of central directory record, after the ZIP64 ones when the directory starts past 4 GiB. */
function endRecords(entries: number, directoryBytes: number, directoryOffset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(directoryBytes, 12);
  const zip64 = directoryOffset >= MAX32;
  end.writeUInt32LE(zip64 ? MAX32 : directoryOffset, 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE((3 << 8) | 63, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(entries), 24);
  record.writeBigUInt64LE(BigInt(entries), 32);
  record.writeBigUInt64LE(BigInt(directoryBytes), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(directoryOffset + directoryBytes), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([record, locator, end]);
}

/** MS-DOS date and time (local time, 2-second steps), as zip headers hold them. */
function dosDateTime(now: Date): { time: number; date: number } {
  const time = (now.getHours() << 11) | (now.getMinutes() << 5) | Math.floor(now.getSeconds() / 2);
  const year = Math.max(0, now.getFullYear() - 1980);
  const date = (year << 9) | ((now.getMonth() + 1) << 5) | now.getDate();
  return { time, date };
}
