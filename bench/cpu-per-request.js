#!/usr/bin/env node
'use strict';
// The server's CPU time per cached read, for comparing two builds of Drey without the bench's other phases:
//   node bench/cpu-per-request.js <checkout> [label] [rounds]
// <checkout> is a folder with a built Drey (dist/main.js) and examples/expenses: this one, or a worktree of
// another commit, run alternately. Drey runs pinned to CPU 0 on a database and Redis prefix of its own;
// autocannon (this process) on CPU 1 reads expense_transactions (x_limit=100) with 10 connections for 2 s,
// then `rounds` (default 3) rounds of 10 s, each printed with the server's utime+stime per request from /proc.
const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const autocannon = require('autocannon');
const { startDrey } = require('./lib/drey');
const { cpuSecondsOf } = require('./lib/processes');

const checkout = resolve(process.argv[2] ?? '.');
const label = process.argv[3] ?? checkout;
const rounds = Number(process.argv[4] ?? 3);
const P = '/api/service-v0/project/expenses/v1';
const PATH = `${P}/datasets/expense_transactions/results?x_limit=100`;
const name = `cpu_per_request_${process.pid}`;

/** utime + stime of a process in seconds. */
const cpuSeconds = (pid) => cpuSecondsOf(`/proc/${pid}/stat`);

function load(url, token, duration) {
  return new Promise((done, fail) =>
    autocannon(
      { url, connections: 10, duration, headers: { authorization: `Bearer ${token}` } },
      (error, result) => (error ? fail(error) : done(result)),
    ),
  );
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'drey-cpu-'));
  try {
    // Started as npm run bench starts Drey (bench/lib/drey.js), from the checkout measured.
    const drey = await startDrey({
      root: checkout,
      work,
      name,
      projectDir: join(checkout, 'examples', 'expenses'),
      P,
      log: 'drey.log',
      secret: 'cpu-per-request-secret-of-at-least-32-bytes',
      password: 'cpu-per-request',
      cpu: 0,
    });
    try {
      execFileSync('taskset', ['-cp', '1', String(process.pid)]);
      await load(drey.url + PATH, drey.token, 2);
      for (let round = 1; round <= rounds; round++) {
        const before = cpuSeconds(drey.server.pid);
        const result = await load(drey.url + PATH, drey.token, 10);
        const perRequest = ((cpuSeconds(drey.server.pid) - before) / result.requests.total) * 1e6;
        console.log(
          `${label} round ${round}: ${Math.round(perRequest)} µs of server CPU a request, ` +
            `${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ` +
            `${result.non2xx} non-2xx`,
        );
      }
    } finally {
      await drey.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
