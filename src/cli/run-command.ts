import type { CliArgs } from '@/cli/cli-args';
import { TABLE_ROWS } from '@/cli/cli-args';
import { datasetOf, EngineSetup, noBuild } from '@/cli/cli-commands';
import type { CliOutput, Output } from '@/cli/cli-output';
import { requestFromCli } from '@/cli/cli-selections';
import {
  cellFormatters,
  csvEscapes,
  csvHeader,
  csvLine,
  JsonArrayWriter,
  jsonRow,
  tableLines,
} from '@/cli/row-formats';
import type { AppConfig } from '@/config/config';
import { ANONYMOUS, Caller } from '@/core/caller';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';
import type { DatasetSpec, Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';
import { standaloneReader } from '@/datasets/datasets-reader';
import type { DatasetRows } from '@/datasets/result-read';
import type { RowBatch } from '@/engine/duckdb/duckdb-stream';
import type { JsonValue } from '@/engine/sql/query-result';
import { Engine } from '@/engine/engine';
import { JsonLogger } from '@/runtime/json-logger';

/**
 * `run`'s wording of the results reader's refusal of a dataset the caller may not open (the reader's
 * rule, the one every door applies), saying how to run it.
 */
function scopeRefusal(dataset: DatasetSpec, caller: Caller, error: unknown): unknown {
  if (!(error instanceof ForbiddenError || error instanceof AuthenticationRequiredError)) {
    return error;
  }
  const who =
    caller.username === null
      ? 'an anonymous caller'
      : `"${caller.username}" (not an administrator)`;
  const needs = dataset.scope === 'private' ? '--as NAME, an administrator' : '--as NAME, any user';
  return new Error(
    `the dataset "${dataset.name}" is ${dataset.scope}: ${who} may not run it (run it ${needs})`,
  );
}

/**
 * Runs a dataset on the current build through the results reader, as every other door reads one: the
 * dataset's scope for `caller` (anonymous unless `--as`), the selections validated, defaulted and cascaded
 * by the parameter catalog. A table is the reader's rows (its first `--limit`) and total. csv and json print
 * every row (or `--limit`) streamed a chunk at a time, so that memory stays flat whatever the count: the
 * reader's rows are a window held in memory and its export chunks are the HTTP bytes (no `--limit`, no JSON
 * array), so those two formats run the statement the reader resolved with the CLI's own encoders.
 */
export async function run(
  project: Project,
  args: CliArgs,
  config: AppConfig,
  options: EngineSetup,
  output: CliOutput,
  caller: Caller = ANONYMOUS,
): Promise<void> {
  const name = args.dataset ?? '';
  // The operator holds the project's files: an unknown name lists every dataset, whatever the caller.
  const dataset = datasetOf(project, name);
  const request = requestFromCli(project, dataset.parameters, args.params);
  const served = new ServedProject(project);
  const engine = new Engine(served, options);
  try {
    if (!(await engine.open())) throw new Error(noBuild(engine, options));
    // Its warnings only: a query's info line is the service's log, not the command's output.
    const logger = new JsonLogger('warn', (line) => output.err(line));
    const reader = standaloneReader(engine, served, config, logger);
    const refused = (error: unknown) => {
      throw scopeRefusal(dataset, caller, error);
    };
    if (args.format === 'table') {
      const limit = args.limit ?? TABLE_ROWS;
      const rows = await reader
        .rows(caller, name, request, { offset: 0, limit, columns: [] }, undefined)
        .catch(refused);
      printTable(rows, output);
    } else {
      const read = await reader.resolve(caller, name, request, undefined).catch(refused);
      await printExport(engine.streamDataset(read.compiled()), args, output);
    }
  } finally {
    await engine.close();
  }
}

function printTable({ columns, databaseTypes, rows, total }: DatasetRows, output: Output): void {
  const typed = columns.map((column, index) => ({ ...column, databaseType: databaseTypes[index] }));
  tableLines({ columns: typed, rows }).forEach((line) => output.out(line));
  const shown = rows.length;
  if (shown === total) {
    output.out(`(${shown} ${shown === 1 ? 'row' : 'rows'})`);
    return;
  }
  output.out(
    `(the first ${shown} of ${total} rows, ${total - shown} left out: --limit ${total} shows them ` +
      'all, --format csv or json prints every row)',
  );
}

/** Every row (or the first `--limit`) as CSV or JSON, printed a chunk at a time as DuckDB yields them. */
async function printExport(
  batches: AsyncGenerator<RowBatch>,
  args: CliArgs,
  output: Output,
): Promise<void> {
  let left = args.limit ?? Infinity;
  let header = args.format === 'csv';
  let escape: boolean[] = [];
  let formats: ((value: JsonValue) => JsonValue)[] = [];
  const json = new JsonArrayWriter();
  // Breaking out of the loop ends the generator, which releases the build it reads.
  for await (const batch of batches) {
    const lines: string[] = [];
    if (header) {
      lines.push(csvHeader(batch.columns));
      escape = csvEscapes(batch.columns, args.csvFormulas);
      formats = cellFormatters(batch.columns, 'csv');
    }
    header = false;
    const rows = Math.min(batch.rowCount, left);
    for (let row = 0; row < rows; row++) {
      const values = batch.columns.map((_, column) => batch.value(row, column));
      if (args.format === 'csv') {
        lines.push(
          csvLine(
            values.map((value, column) => formats[column](value)),
            escape,
          ),
        );
      } else lines.push(...json.add(jsonRow(batch.columns, values)));
    }
    batch.release();
    left -= rows;
    // One write per chunk (up to 2048 rows), not per row.
    if (lines.length > 0) output.out(lines.join('\n'));
    await output.drained?.();
    if (left <= 0) break;
  }
  if (args.format === 'json') output.out(json.end().join('\n'));
}
