// @ts-check
'use strict';
// The comparison of the uncached phase: the statement Drey runs for orders_summary, run directly with
// @duckdb/node-api on the same environment file, with the same selections, the same concurrency, and on
// the same pinned core, without HTTP, auth, parameters or caching. The SQL comes from Drey's own compiler
// (dist/), so both run the very same statement; only the execution is measured.
// Usage: node bench/direct-duckdb.js <environment file> <project dir> <seconds> <concurrency> <first>
// (`first`: the number of the first selection, so that both sides run the same statements)
const { DuckDBInstance } = require('@duckdb/node-api');
const { loadProject } = require('../dist/core/project/project-loader');
const { compileDataset } = require('../dist/engine/compile');
const { duckdbParameters } = require('../dist/engine/duckdb/duckdb-binds');
const { READ_ONLY_OPTIONS } = require('../dist/engine/environment/environment');
const { selection } = require('./lib/selections');

const [file, projectDir, seconds, concurrency, first] = process.argv.slice(2);
const project = loadProject(projectDir);
const ANONYMOUS = { username: null, isAdmin: false, fields: {} };

/** @param {number} i */
function statement(i) {
  const chosen = selection(i);
  const selections = {
    order_regions: {
      widget: 'multi_select',
      selected: chosen.regions.map((id) => ({ id, label: id, fields: {} })),
    },
    order_dates: { widget: 'date_range', start: chosen.start, end: chosen.end },
  };
  return compileDataset(project, 'orders_summary', { selections, caller: ANONYMOUS });
}

async function main() {
  const instance = await DuckDBInstance.create(file, READ_ONLY_OPTIONS);
  let next = Number(first ?? 0);
  /** @type {number[]} */
  const latencies = [];
  const run = async (/** @type {number} */ until, /** @type {boolean} */ record) => {
    while (performance.now() < until) {
      const { sql, binds } = statement(next++);
      const started = performance.now();
      // As Drey does per request: a connection, a prepared statement, the bound values, every row read.
      const connection = await instance.connect();
      const prepared = await connection.prepare(sql);
      const { values, types } = duckdbParameters(binds);
      prepared.bind(values, types);
      const reader = await prepared.runAndReadAll();
      reader.getRows();
      prepared.destroySync();
      connection.closeSync();
      if (record) latencies.push(performance.now() - started);
    }
  };
  const workers = (/** @type {number} */ ms, /** @type {boolean} */ record) => {
    const until = performance.now() + ms;
    return Promise.all(Array.from({ length: Number(concurrency) }, () => run(until, record)));
  };
  await workers(2000, false);
  await workers(Number(seconds) * 1000, true);
  const result = {
    requests: latencies.length,
    seconds: Number(seconds),
    latencies: latencies.map((value) => Math.round(value * 1000) / 1000),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  instance.closeSync();
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
