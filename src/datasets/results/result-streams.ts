import { InvalidRequestError } from '@/core/errors';
import type { CsvFormulas } from '@/core/result-builtins';
import { isTextColumn } from '@/engine/export/csv-cells';
import { parseResultOptions } from '@/datasets/results/result-options';
import { csvLine, ndjsonLine } from '@/datasets/results/stream-formats';
import type { RowBatch } from '@/engine/duckdb/duckdb-stream';
import { decimalPrinters } from '@/engine/sql/decimal-text';
import type { JsonValue } from '@/engine/sql/query-result';

/** The columns, first row and row count an export encodes from rows, and how CSV writes text. */
export interface StreamOptions {
  select: string[];
  offset: number;
  limit: number;
  /** `x_csv_formulas`: `escaped` unless given. */
  csvFormulas?: CsvFormulas;
}

/** What an export writes: the columns `x_select` names, and the rows `x_offset` and `x_limit` name. */
export interface ExportRows {
  select: string[];
  offset: number;
  /** Undefined without `x_limit`: every row from `offset` on. */
  limit: number | undefined;
}

/**
 * The columns and rows an export writes, the built-ins checked like a JSON result's (`x_limit` at most
 * `maxRows`, as the OpenAPI document states). Without `x_limit` an export is every row (decisions.md,
 * "Results"); with it, the rows a JSON page of the same request would hold (issue 40: a client that asked
 * for 10 rows got every one in CSV). `x_orientation` is only validated.
 */
export function exportRows(builtins: Record<string, unknown>, maxRows: number): ExportRows {
  const options = parseResultOptions(builtins, maxRows);
  const given =
    builtins.x_limit !== undefined && builtins.x_limit !== null && builtins.x_limit !== '';
  return {
    select: options.select,
    offset: options.offset,
    limit: given ? options.limit : undefined,
  };
}

function columnIndexes(names: string[], select: string[]): number[] {
  if (select.length === 0) return names.map((_, index) => index);
  return select.map((name) => {
    const index = names.indexOf(name);
    if (index < 0) throw new InvalidRequestError(`x_select names an unknown column "${name}"`);
    return index;
  });
}

/**
 * Rows per string before it becomes bytes. A chunk of 2,048 rows as one string would often pass 128 KB,
 * and V8 puts strings that large straight into the old generation, where only a full collection frees them:
 * over a long export they pile up by the hundred megabytes.
 */
const ROWS_PER_STRING = 256;

/** Turns batches into bytes. */
class RowEncoder {
  private indexes?: number[];
  private names: string[] = [];
  /** The text columns CSV escapes, by position among those written; undefined for values as stored. */
  private escape?: boolean[];
  /** CSV: each written column's printer of a decimal at its scale (2320.80), as DuckDB's CSV has it. */
  private decimals: (((value: number | string) => string) | undefined)[] = [];
  private skip: number;
  /** Rows still to write. */
  left: number;

  constructor(
    private readonly format: 'csv' | 'ndjson',
    private readonly options: StreamOptions,
  ) {
    this.skip = options.offset;
    this.left = options.limit;
  }

  encode(batch: RowBatch): Buffer {
    const parts: Buffer[] = [];
    let text = '';
    if (!this.indexes) {
      const all = batch.columns.map((column) => column.name);
      this.indexes = columnIndexes(all, this.options.select);
      this.names = this.indexes.map((index) => all[index]);
      if ((this.options.csvFormulas ?? 'escaped') === 'escaped') {
        this.escape = this.indexes.map((index) => isTextColumn(batch.columns[index].type));
      }
      // The header: the project's column names, as stored (engine/export/csv-cells.ts).
      if (this.format === 'csv') {
        text += csvLine(this.names);
        this.decimals = decimalPrinters(this.indexes.map((index) => batch.columns[index]));
      }
    }
    const indexes = this.indexes;
    let start = 0;
    if (this.skip > 0) {
      start = Math.min(this.skip, batch.rowCount);
      this.skip -= start;
    }
    const end = Math.min(batch.rowCount, start + this.left);
    this.left -= end - start;
    const picked: JsonValue[] = new Array<JsonValue>(indexes.length);
    for (let row = start; row < end; row++) {
      for (let i = 0; i < indexes.length; i++) {
        const value = batch.value(row, indexes[i]);
        const decimal = this.decimals[i];
        picked[i] = decimal && typeof value === 'number' ? decimal(value) : value;
      }
      text += this.format === 'csv' ? csvLine(picked, this.escape) : ndjsonLine(this.names, picked);
      if ((row - start) % ROWS_PER_STRING === ROWS_PER_STRING - 1) {
        parts.push(Buffer.from(text));
        text = '';
      }
    }
    if (text !== '') parts.push(Buffer.from(text));
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
}

/**
 * CSV (a header, then one CRLF record per row) or NDJSON (one object per line), written chunk by chunk as
 * the engine yields them. Stopping early (a limit reached, a client gone) returns the engine's generator,
 * which ends the query. Nothing of a chunk but its bytes is held while the client reads them: rows kept
 * across that wait would outlive V8's young generation and pile up in the old one.
 */
export async function* encodeRows(
  batches: AsyncIterable<RowBatch>,
  format: 'csv' | 'ndjson',
  options: StreamOptions,
): AsyncGenerator<Buffer> {
  const encoder = new RowEncoder(format, options);
  const iterator = batches[Symbol.asyncIterator]();
  const next = async (): Promise<Buffer | undefined> => {
    const step = await iterator.next();
    if (step.done) return undefined;
    try {
      return encoder.encode(step.value);
    } finally {
      step.value.release();
    }
  };
  try {
    while (encoder.left > 0) {
      const bytes = await next();
      if (bytes === undefined) return;
      if (bytes.length > 0) yield bytes;
    }
  } finally {
    await iterator.return?.();
  }
}
