import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'major' | 'minor'; execution: 'async' | 'sync' }) => void;

let collect: Collect | undefined;

/**
 * @duckdb/node-api frees the native memory of a result chunk only when V8 finalises the chunk's JavaScript
 * wrapper, which happens in full collections only; and V8 schedules those by the growth of its own heap,
 * blind to memory outside it (the bindings do not report theirs). A long export reads a chunk every few
 * milliseconds while allocating little JavaScript, so its chunks used to pile up by the hundred megabytes
 * before V8 collected. Every so many chunks this asks V8 for a full collection, incremental so that other
 * requests are not stopped meanwhile, which keeps an export's memory flat (see docs/performance.md,
 * "Figures behind the code", "Collecting DuckDB's chunks"). The `gc` function is taken from a fresh
 * context once `--expose-gc` is on, so the process's own global scope does not change.
 */
export function collectNativeChunks(): void {
  gc().call(undefined, { type: 'major', execution: 'async' });
}

/**
 * A young-generation collection (a scavenge): enough for chunks that were let go of as soon as their
 * values were copied, which are still young then. It frees their native memory as well as a full
 * collection does at a fraction of the cost, and does not mark the server's whole heap (see
 * docs/performance.md, "Figures behind the code", "Collecting DuckDB's chunks").
 * A chunk kept longer (a slow reader of {@link RowBatch}es) may have moved to the old generation and needs
 * {@link collectNativeChunks}.
 */
export function collectYoungChunks(): void {
  gc().call(undefined, { type: 'minor', execution: 'sync' });
}

function gc(): Collect {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as Collect;
  }
  return collect;
}

/** Chunks of up to 2,048 rows read between two collections: about 16 MB of native memory at most. */
export const CHUNKS_PER_COLLECTION = 64;
