// @ts-check
'use strict';
const os = require('node:os');
const { readFileSync } = require('node:fs');

/** The machine a run was made on, for the results file. */
function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  let duckdb = 'unknown';
  try {
    duckdb = require('@duckdb/node-api/package.json').version;
  } catch {
    // not resolvable through exports: left unknown
  }
  return {
    // Not availableParallelism(): this process is pinned to one CPU.
    nproc: os.cpus().length,
    cpu: model.trim(),
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    duckdb,
    os: `${os.type()} ${os.release()}`,
    load: os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' '),
  };
}

/** @param {number} value @param {number} digits */
function fixed(value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/**
 * A Markdown table: one row per measurement.
 * @param {{ name: string, rps?: number, p50?: number, p95?: number, p99?: number, note: string }[]} rows
 */
function table(rows) {
  const lines = [
    '| Measurement | req/s | p50 ms | p95 ms | p99 ms | Notes |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.name} | ${fixed(row.rps ?? NaN, 0)} | ${fixed(row.p50 ?? NaN, 2)} | ${fixed(row.p95 ?? NaN, 2)} | ${fixed(row.p99 ?? NaN, 2)} | ${row.note} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The checks of the issue, each with what was measured.
 * @param {{ check: string, measured: string, pass: boolean }[]} bars
 */
function barsTable(bars) {
  const lines = ['| Bar | Measured | |', '|---|---|---|'];
  for (const bar of bars)
    lines.push(`| ${bar.check} | ${bar.measured} | ${bar.pass ? 'pass' : '**FAIL**'} |`);
  return lines.join('\n');
}

module.exports = { machine, table, barsTable, fixed };
