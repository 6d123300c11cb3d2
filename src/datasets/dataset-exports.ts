import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CallerSlots } from '@/core/caller-slots';
import type { CsvFormulas, ExportFormat } from '@/core/result-builtins';
import type { ResultRead } from '@/datasets/result-read';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { encodeRows, ExportRows } from '@/datasets/results/result-streams';
import { Engine } from '@/engine/engine';

/**
 * A dataset's exports (CSV, NDJSON, Parquet, ...), of a read the results reader (DatasetsService) resolved:
 * every row, streamed, never cached whole. Its export slots are counted apart from the reader's query
 * slots, as they always were (CallerSlots counts each kind on its own).
 */
@Injectable()
export class DatasetExports {
  constructor(
    private readonly engine: Engine,
    private readonly cache: DatasetResultCache,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.slots = new CallerSlots(config.callerSlots);
  }

  /** Exports running per caller. */
  private readonly slots: CallerSlots;

  /**
   * An export's chunks: written by DuckDB's own writers ({@link Engine.exportDataset}), or, for a dataset
   * on an external connection, CSV or NDJSON encoded from its rows, in the columns `select` names. The
   * caller's export slot is taken when the first chunk is read (a refusal is thrown then, and so is a
   * failure while writing) and held until the last one is read or the reader stops.
   */
  chunks(
    read: ResultRead & { owner: string },
    format: ExportFormat,
    rows: ExportRows,
    csvFormulas: CsvFormulas,
  ): AsyncIterable<Uint8Array | string> {
    const { dataset } = read;
    const { select, offset, limit } = rows;
    const whole = read.compiled();
    // x_limit and x_offset as a JSON page applies them, on the engine that runs the query (DuckDB or the
    // connection's): both are whole numbers checked by exportRows, so the text is safe to write in.
    const compiled =
      limit === undefined && offset === 0
        ? whole
        : {
            ...whole,
            sql: `SELECT * FROM (\n${whole.sql}\n) AS paged${limit === undefined ? '' : ` LIMIT ${limit}`} OFFSET ${offset}`,
          };
    const fromRows =
      compiled.target.kind === 'connection' && (format === 'csv' || format === 'ndjson');
    const chunks = fromRows
      ? encodeRows(this.cache.stream(dataset.name, this.engine.streamDataset(compiled)), format, {
          select,
          offset: 0,
          limit: Number.POSITIVE_INFINITY,
          csvFormulas,
        })
      : this.cache.exported(dataset.name, () =>
          this.engine.exportDataset(compiled, { format, select, name: dataset.name, csvFormulas }),
        );
    return this.slots.stream('export', read.owner, chunks);
  }
}
