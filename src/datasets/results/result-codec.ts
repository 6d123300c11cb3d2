import type { ResultCodec } from '@/cache/tiered-cache';
import { DomainError, ErrorCode, ModelFailedError } from '@/core/errors';
import type { SchemaField } from '@/datasets/results/result-shape';
import type { QueryResult } from '@/engine/sql/query-result';

/**
 * A dataset's result as the cache keeps it. A small result is kept whole (every page, shape and layout is
 * made from it); a larger one is kept as its columns and row count (`total`, with no rows), and each page
 * of its rows apart, as a run whose `result.rows` are that page's.
 */
export interface CachedRun {
  result: QueryResult;
  fields: SchemaField[];
  /** Set for a result larger than is kept whole: its row count (`result.rows` is then empty). */
  total?: number;
}

type EncodedError =
  | { kind: 'domain'; code: ErrorCode; message: string; retryAfterSeconds?: number }
  | { kind: 'model'; model: string; detail: string };

/**
 * A rough count of the bytes a result holds on the V8 heap (arrays, boxed numbers, strings), so that the
 * in-process cache's budget means memory rather than a number of results.
 */
function heapBytes(run: CachedRun): number {
  let bytes = 1024;
  for (const row of run.result.rows) {
    bytes += 32 + 8 * row.length;
    for (const value of row) {
      if (typeof value === 'string') bytes += 20 + value.length;
      else if (typeof value === 'number' && !Number.isInteger(value)) bytes += 16;
    }
  }
  return bytes;
}

export const CACHED_RUN_CODEC: ResultCodec<CachedRun> = {
  encode: (run) => JSON.stringify(run),
  decode: (text) => JSON.parse(text) as CachedRun,
  bytes: heapBytes,
  encodeError(error) {
    let encoded: EncodedError | undefined;
    if (error instanceof ModelFailedError) {
      encoded = { kind: 'model', model: error.model, detail: error.engineMessage };
    } else if (error instanceof DomainError) {
      const { code, message, retryAfterSeconds } = error;
      encoded = { kind: 'domain', code, message, retryAfterSeconds };
    }
    return encoded && JSON.stringify(encoded);
  },
  decodeError(text) {
    const encoded = JSON.parse(text) as EncodedError;
    return encoded.kind === 'domain'
      ? new DomainError(encoded.code, encoded.message, encoded.retryAfterSeconds)
      : new ModelFailedError(encoded.model, encoded.detail);
  },
};
