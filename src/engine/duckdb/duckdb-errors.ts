import { DomainError } from '@/core/errors';

/**
 * DuckDB stopped a query at its `memory_limit`, or at `max_temp_directory_size` when spilling to disk:
 * "Out of Memory Error: failed to allocate data of size 128.0 MiB (128.0 MiB/244.1 MiB used)", or "...
 * failed to offload data block of size 256.0 KiB (95.2 MiB/95.3 MiB used)". The database stays usable.
 */
export function isOutOfMemory(error: unknown): error is Error {
  // Not `instanceof Error`: the driver's errors come from another realm under Jest.
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /\bOut of Memory Error\b/.test(message);
}

/**
 * The `query_too_large` error of a query DuckDB stopped at its limits. Nothing of DuckDB's message: its
 * sizes tell the configured limit, and its advice (`SET memory_limit`, ...) nobody calling the API can
 * follow.
 */
export function queryTooLarge(): DomainError {
  return new DomainError(
    'query_too_large',
    'The query needed more memory than the engine may use and was stopped: filter or aggregate in SQL, ' +
      'or read fewer rows and columns',
  );
}

/** What a build step stopped by the limits says: the limits are the service's configuration. */
export const BUILD_TOO_LARGE =
  'it needed more memory than the engine may use; raise ENGINE_MEMORY_LIMIT_MB (or ' +
  'ENGINE_TEMP_LIMIT_MB, the disk it may spill to)';
