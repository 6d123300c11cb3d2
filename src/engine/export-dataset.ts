import type { DuckDBConnection } from '@duckdb/node-api';
import { PassThrough, Readable } from 'node:stream';
import { NotAcceptableError } from '@/core/errors';
import type { CsvFormulas, ExportFormat } from '@/core/result-builtins';
import type { CompiledDataset } from '@/engine/compile';
import { arrowStream } from '@/engine/duckdb/duckdb-arrow';
import { WrittenExport, exportDuckdbQuery } from '@/engine/duckdb/duckdb-export';
import type { EnvironmentManager } from '@/engine/environment/environment-manager';
import type { ExportSpace } from '@/engine/export/export-space';
import { ScrubbedErrors, modelError } from '@/engine/scrubbed-errors';

/** What a caller asks of an export. */
export interface DatasetExportRequest {
  format: ExportFormat;
  select: readonly string[];
  name: string;
  /** How a CSV export writes its text cells (`x_csv_formulas`). */
  csvFormulas: CsvFormulas;
}

/** What an export runs on: the engine's environments, its export space, its time limit and its errors. */
export interface ExportGround {
  environments: EnvironmentManager;
  exports: ExportSpace;
  timeoutMs: number;
  errors: ScrubbedErrors;
}

/**
 * Every row of a compiled dataset in an export format, written by DuckDB (see {@link exportDuckdbQuery}
 * and {@link arrowStream}); `select` picks and orders the columns. The environment is held while DuckDB
 * reads it: until the file is written, or for an Arrow stream until it ends. A dataset on an external
 * connection is refused here: its rows are exported as CSV or NDJSON from the rows the engine streams
 * (`Engine.streamDataset`); the other formats are written from the engine's own tables only.
 */
export async function exportDataset(
  compiled: CompiledDataset,
  request: DatasetExportRequest,
  ground: ExportGround,
): Promise<WrittenExport> {
  if (compiled.target.kind === 'connection') {
    throw new NotAcceptableError(
      `The dataset "${compiled.dataset}" reads the connection "${compiled.target.connection}"; ` +
        'its rows are exported as csv or ndjson only',
    );
  }
  const { errors, timeoutMs } = ground;
  const lease = await ground.environments.acquire();
  let connection: DuckDBConnection | undefined;
  const written: WrittenExport = { stream: new PassThrough() };
  let handedOver = false;
  try {
    connection = await lease.environment.connect();
    const open = connection;
    // Released when DuckDB is done with the environment, which may be before the client has every byte.
    const finished = (rows: number): void => {
      written.rows = rows;
      open.closeSync();
      lease.release();
    };
    const { sql, binds } = compiled;
    if (request.format === 'arrow') {
      const stream = arrowStream(open, sql, binds, request.select, timeoutMs, finished);
      handedOver = true;
      written.stream = scrubbedStream(errors, compiled.model, stream);
      return written;
    }
    const { stream, done } = await exportDuckdbQuery(open, sql, binds, ground.exports, {
      format: request.format,
      select: request.select,
      name: request.name,
      csvFormulas: request.csvFormulas,
      timeoutMs,
    });
    handedOver = true;
    done.then(finished, () => finished(0));
    written.stream = scrubbedStream(errors, compiled.model, stream);
    return written;
  } catch (error) {
    throw errors.of(modelError(compiled.model, error));
  } finally {
    if (!handedOver) {
      connection?.closeSync();
      lease.release();
    }
  }
}

/** A stream whose failure is told as a model's, like a query's; destroying it stops the source. */
function scrubbedStream(errors: ScrubbedErrors, model: string, stream: Readable): Readable {
  const scrubbed = new PassThrough();
  stream.on('error', (error) => scrubbed.destroy(errors.of(modelError(model, error)) as Error));
  scrubbed.on('close', () => stream.destroy());
  return stream.pipe(scrubbed);
}
