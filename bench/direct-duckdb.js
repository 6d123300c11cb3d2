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
const { READ_ONLY_OPTIONS } = require('../dist/engine/environment/environment');
const { runDirect, summaryStatement } = require('./lib/direct-query');

const [file, projectDir, seconds, concurrency, first] = process.argv.slice(2);
const project = loadProject(projectDir);

async function main() {
  const instance = await DuckDBInstance.create(file, READ_ONLY_OPTIONS);
  let next = Number(first ?? 0);
  /** @type {number[]} */
  const latencies = [];
  const run = async (/** @type {number} */ until, /** @type {boolean} */ record) => {
    // Each client's connection, kept from one query to the next, as Drey keeps its idle ones.
    const connection = await instance.connect();
    while (performance.now() < until) {
      const statement = summaryStatement(project, next++);
      const started = performance.now();
      await runDirect(connection, statement);
      if (record) latencies.push(performance.now() - started);
    }
    connection.closeSync();
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
