import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { FileHandle, open, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '@/core/errors';
import { collectYoungChunks } from '@/engine/process/native-memory';
import { processAlive } from '@/engine/process/leftovers';

/** How often the disk a file takes is measured against the space left (its COPY is stopped past it). */
const WATCH_MS = 50;
/** How long a reader that has caught up with the writer waits before reading again. */
const CATCH_UP_MS = 5;
/** Bytes read from the file at a time. */
const CHUNK_BYTES = 256 * 1024;
/** Reads sent between two young-generation collections (see {@link ExportSpace.tail}): 4 MB. */
const CHUNKS_PER_COLLECTION = 16;

/** The export would pass what the server keeps on disk for exports; the COPY writing it was stopped. */
export class ExportSpaceFullError extends DomainError {
  constructor(limitMb: number) {
    super(
      'query_too_large',
      `The export passed the ${limitMb} MB of disk this server keeps for exports being written ` +
        '(ENGINE_EXPORT_LIMIT_MB); select fewer columns (x_select) or narrower selections, or try again later',
    );
  }
}

/** A file being written, read as it grows. */
export interface TailedFile<T> {
  /** The file's bytes, from the first DuckDB writes to the last; fails as the writing does. */
  stream: Readable;
  /** What the writer returned (a COPY's row count), once it has finished. */
  done: Promise<T>;
}

/**
 * The private folder DuckDB's `COPY ... TO` writes exports into (`<dataDir>/exports/<pid>-<random>`, mode
 * 0700), and the disk they may take together.
 *
 * A file is sent while DuckDB writes it: it is opened as soon as it exists and its name removed at once, so
 * that nothing is left on disk whatever ends the reply (sent, the client gone, an error, the process
 * killed); the reader follows the writer through the open descriptor, which DuckDB writes in order
 * (verified for CSV and Parquet: the file grows as the COPY runs). Sending while writing makes an export
 * take about as long as the COPY alone, not the COPY and then the transfer. The bytes a file takes are
 * measured while it is written and sent, and the COPY is interrupted when all the files would pass the
 * limit.
 *
 * Our own: DuckDB's COPY has no size limit and writes only files, and a temporary-file library would keep
 * the name until the reply ends, which a killed process would leave behind.
 */
export class ExportSpace {
  readonly dir: string;
  private readonly limitBytes: number;
  /** Bytes taken by the files being written or sent, as last measured. */
  private held = 0;

  constructor(
    dataDir: string,
    private readonly limitMb: number,
  ) {
    const root = join(dataDir, 'exports');
    mkdirSync(root, { recursive: true, mode: 0o700 });
    // The folders of processes that died mid-export (their files were still being written).
    for (const name of readdirSync(root)) {
      const writer = /^(\d+)-[0-9a-f]{8}$/.exec(name);
      if (writer && !processAlive(Number(writer[1]))) {
        rmSync(join(root, name), { recursive: true, force: true });
      }
    }
    // Named by the process (whose death frees it) and a random part (an engine of its own).
    this.dir = join(root, `${process.pid}-${randomUUID().slice(0, 8)}`);
    mkdirSync(this.dir, { mode: 0o700 });
    this.limitBytes = limitMb * 1024 * 1024;
  }

  /** Bytes taken now (for tests). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Runs `write` with a fresh path in the folder (named `<uuid>.<ext>`: a model's SQL cannot guess another
   * request's file) and reads the file as it is written. `stop` interrupts the writer: when the space
   * runs out, or when the reader is destroyed before the writer is done (the client went away).
   * `check` may refuse what the writer returned (a row count past a format's limit): the stream then
   * fails instead of ending. `inside`: the writer makes `path` a folder and writes the file of that name
   * in it (DuckDB's COPY with FILE_SIZE_BYTES); the folder goes with the file.
   */
  async tail<T>(
    ext: string,
    write: (path: string) => Promise<T>,
    stop: () => void,
    check: (result: T) => Error | undefined = () => undefined,
    inside?: string,
  ): Promise<TailedFile<T>> {
    const target = join(this.dir, `${randomUUID()}.${ext}`);
    const path = inside === undefined ? target : join(target, inside);
    const remove = async (): Promise<void> => {
      await unlink(path).catch(() => undefined);
      if (inside !== undefined) await rm(target, { recursive: true, force: true });
    };
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    let full = false;
    const writing = write(target).then(
      (value) => {
        outcome = { ok: true, value };
      },
      (error: unknown) => {
        outcome = { ok: false, error: full ? new ExportSpaceFullError(this.limitMb) : error };
      },
    );
    const settled = (): NonNullable<typeof outcome> | undefined => outcome;
    let measured = 0;
    let released = false;
    let handle: FileHandle | undefined;
    const measure = (size: number): void => {
      // A stat still in flight when the file was given back must not count it again.
      if (released) return;
      this.held += size - measured;
      measured = size;
      if (this.held > this.limitBytes && !full && !settled()) {
        full = true;
        stop();
      }
    };
    const watch = setInterval(() => {
      (handle ? handle.stat() : stat(path)).then(
        (stats) => measure(stats.size),
        () => undefined,
      );
    }, WATCH_MS);
    const release = (): void => {
      if (released) return;
      released = true;
      clearInterval(watch);
      this.held -= measured;
      measured = 0;
    };
    try {
      handle = await this.opened(path, writing, settled);
    } catch (error) {
      release();
      await writing;
      await remove();
      throw error;
    }
    await remove();
    const file = handle;
    const done = writing.then(() => {
      const result = settled();
      if (!result?.ok) throw result?.error;
      return result.value;
    });
    // Read by the stream; a failure with nobody reading is not an unhandled rejection.
    done.catch(() => undefined);
    let position = 0;
    let spare: Buffer | undefined;
    let sent = 0;
    const pump = async (stream: Readable): Promise<void> => {
      for (;;) {
        const buffer = spare ?? Buffer.allocUnsafe(CHUNK_BYTES);
        spare = undefined;
        const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, position);
        if (stream.destroyed) return;
        if (bytesRead > 0) {
          position += bytesRead;
          measure(Math.max(measured, position));
          if (bytesRead < CHUNK_BYTES / 4) {
            // A short read (the reader caught up with the writer) is sent as a copy of its own size:
            // the chunk would otherwise hold the whole buffer until it is collected.
            spare = buffer;
            stream.push(Buffer.from(buffer.subarray(0, bytesRead)));
          } else {
            stream.push(buffer.subarray(0, bytesRead));
          }
          // A chunk written to the socket is freed only when V8 collects it, which V8 schedules by its
          // own heap; an export allocates little else, so dead chunks (native memory, malloc's) piled
          // up until V8's external-memory limit forced a collection, and malloc kept the heap they had
          // grown. They die young, and a scavenge frees them (see docs/performance.md, "Figures behind
          // the code", "Scavenging an export's chunks").
          if (++sent % CHUNKS_PER_COLLECTION === 0) collectYoungChunks();
          return;
        }
        // Nothing new yet: the same buffer serves the next read.
        spare = buffer;
        const result = settled();
        if (result && !result.ok) throw result.error;
        if (result?.ok) {
          // Written whole: what was written before the COPY returned has been read once the file's size
          // is reached.
          if (position >= (await file.stat()).size) {
            const refused = check(result.value);
            if (refused) throw refused;
            stream.push(null);
            return;
          }
          continue;
        }
        await Promise.race([writing, sleep(CATCH_UP_MS)]);
      }
    };
    const stream = new Readable({
      highWaterMark: CHUNK_BYTES,
      read() {
        pump(this).catch((error: unknown) => this.destroy(error as Error));
      },
      destroy: (error, callback) => {
        // Nobody reads any more: the COPY stops rather than writing on into a file without a name.
        if (!settled()) stop();
        release();
        file.close().then(
          () => callback(error),
          () => callback(error),
        );
      },
    });
    return { stream, done };
  }

  /** The file, opened as soon as the writer has created it; the writer's error when it failed first. */
  private async opened(
    path: string,
    writing: Promise<void>,
    settled: () => { ok: true } | { ok: false; error: unknown } | undefined,
  ): Promise<FileHandle> {
    for (;;) {
      const before = settled();
      try {
        return await open(path, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      if (before && !before.ok) throw before.error;
      // Settled before the look and still no file: the writer wrote none.
      if (before) throw new Error('the export wrote no file');
      await Promise.race([writing, sleep(CATCH_UP_MS)]);
    }
  }

  /** Removes the folder (shutdown); files still being sent have no name there any more. */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
