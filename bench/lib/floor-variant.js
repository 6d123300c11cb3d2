// @ts-check
'use strict';
// bench/uncached-cpu.js's floor: `count` orders_summary statements from selection number `first` on, run 10
// at a time with @duckdb/node-api as bench/direct-duckdb.js runs them, and the process's CPU per query
// (all threads, and the main thread's). `variant`: `plain`; `wait`, 3 ms of waiting (no CPU) before each
// query; `work`, 2 ms of work on the main thread before each.
// Usage: node bench/lib/floor-variant.js <environment file> <count> <first> <variant>
const { setTimeout: sleep } = require('node:timers/promises');
const { DuckDBInstance } = require('@duckdb/node-api');
const { loadProject } = require('../../dist/core/project/project-loader');
const { READ_ONLY_OPTIONS } = require('../../dist/engine/environment/environment');
const { runDirect, summaryStatement } = require('./direct-query');
const { cpuSecondsOf } = require('./processes');

const [file, count, first, variant] = process.argv.slice(2);
const project = loadProject(require('node:path').join(__dirname, '..', 'project'));

/** The main thread's utime + stime, in ms. */
function mainThreadMs() {
  return cpuSecondsOf(`/proc/self/task/${process.pid}/stat`) * 1000;
}

async function main() {
  const instance = await DuckDBInstance.create(file, READ_ONLY_OPTIONS);
  /** @type {number[]} */
  const latencies = [];
  const run = async (/** @type {number} */ from, /** @type {number} */ total) => {
    let next = from;
    const client = async () => {
      const connection = await instance.connect();
      while (next < from + total) {
        const statement = summaryStatement(project, next++);
        const started = performance.now();
        if (variant === 'wait') await sleep(3);
        if (variant === 'work') while (performance.now() < started + 2);
        await runDirect(connection, statement);
        latencies.push(performance.now() - started);
      }
      connection.closeSync();
    };
    await Promise.all(Array.from({ length: 10 }, client));
  };
  await run(90_000, 30);
  latencies.length = 0;
  const main = mainThreadMs();
  const cpu = process.cpuUsage();
  await run(Number(first), Number(count));
  const used = process.cpuUsage(cpu);
  const result = {
    cpuMs: (used.user + used.system) / 1000 / Number(count),
    mainMs: (mainThreadMs() - main) / Number(count),
    latencies,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  instance.closeSync();
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
