// @ts-check
'use strict';
// The floor of the export phase: DuckDB itself writing the rows of an orders_detail export, with no HTTP,
// auth or parameters. The statement comes from Drey's own compiler (dist/), with the selections an export
// without any takes (every region, the whole date range), so both sides read the very same rows; the
// database is opened read-only with Drey's own engine limits (threads, memory), on the same pinned core.
// Usage: node bench/floor-duckdb-export.js <environment file> <project dir> <format> <output dir>
//   format csv | json | parquet: `COPY (<statement>) TO '<output dir>/floor.<format>' (FORMAT <format>)`;
//   format chunks: the statement's rows read through @duckdb/node-api chunk by chunk, no conversion
//   (DuckDB has no Arrow IPC writer in this build, so this is the engine's own reading speed: the floor of
//   an Arrow export, which can do no better than hand those chunks on).
// Runs it three times and prints the median run as one JSON line: { rows, seconds, bytes, runs, peakMb }
// (peakMb: this process's peak resident memory over the runs).
const { rmSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const { loadProject } = require('../dist/core/project/project-loader');
const { compileDataset } = require('../dist/engine/compile');
const { duckdbParameters } = require('../dist/engine/duckdb/duckdb-binds');
const { ANONYMOUS } = require('./lib/direct-query');
const { DEFAULT_ENGINE_LIMITS, limitStatements } = require('../dist/engine/duckdb/duckdb-instance');
const { EXPORT_SELECTION } = require('./lib/selections');

const [file, projectDir, format, outDir] = process.argv.slice(2);
const FORMATS = ['csv', 'json', 'parquet', 'chunks'];
if (!file || !projectDir || !FORMATS.includes(format ?? '') || !outDir) {
  process.stderr.write(
    `usage: floor-duckdb-export.js <file> <project> <${FORMATS.join('|')}> <dir>\n`,
  );
  process.exit(2);
}
/** Runs of the floor per round, the median reported. */
const REPEATS = 3;

/**
 * One run of the floor: the COPY (or the chunk loop), timed, its file measured and removed.
 * @param {import('@duckdb/node-api').DuckDBConnection} connection
 * @param {string} sql
 * @param {any[]} values
 * @param {any[]} types
 * @param {string} target
 */
async function once(connection, sql, values, types, target) {
  let rows = 0;
  let bytes = 0;
  const started = performance.now();
  if (format === 'chunks') {
    const prepared = await connection.prepare(sql);
    prepared.bind(values, types);
    const result = await prepared.stream();
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      rows += chunk.rowCount;
    }
    prepared.destroySync();
  } else {
    const prepared = await connection.prepare(
      `COPY (${sql}) TO '${target}' (FORMAT ${format === 'json' ? 'json' : format})`,
    );
    prepared.bind(values, types);
    const reader = await prepared.runAndReadAll();
    rows = Number(reader.getRows()[0]?.[0] ?? NaN);
    prepared.destroySync();
  }
  const seconds = (performance.now() - started) / 1000;
  if (format !== 'chunks') {
    bytes = statSync(target).size;
    rmSync(target, { force: true });
  }
  return { rows, seconds, bytes };
}

async function main() {
  const project = loadProject(projectDir);
  const selections = {
    order_regions: { widget: 'multi_select', selected: [] },
    order_dates: {
      widget: 'date_range',
      start: EXPORT_SELECTION.start,
      end: EXPORT_SELECTION.end,
    },
  };
  const { sql, binds } = compileDataset(project, 'orders_detail', {
    selections,
    caller: ANONYMOUS,
  });
  // Read-only as Drey opens it, but with external access left on: COPY writes a file.
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const connection = await instance.connect();
  for (const statement of limitStatements(DEFAULT_ENGINE_LIMITS)) await connection.run(statement);
  const { values, types } = duckdbParameters(binds);
  const target = join(outDir, `floor-${process.pid}.${format}`);
  /** @type {{ rows: number, seconds: number, bytes: number }[]} */
  const runs = [];
  for (let run = 0; run < REPEATS; run++)
    runs.push(await once(connection, sql, values, types, target));
  // The median run: one COPY of a million rows takes about a second, short enough that another tenant's
  // burst moved single runs by a quarter between rounds here.
  const middle = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)];
  connection.closeSync();
  instance.closeSync();
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ ...middle, runs: runs.length, peakMb })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
