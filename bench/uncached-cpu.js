#!/usr/bin/env node
'use strict';
// Where the uncached query's time goes, for comparing builds of Drey without the bench's other phases:
//   node bench/uncached-cpu.js <checkout> [rounds] [requests]
// Drey (<checkout>/dist/main.js, bench/project with 1,000,000 orders) runs pinned to CPU 0; this process, on
// CPU 1, sends `requests` (default 300) orders_summary requests with a new selection each, 10 at a time,
// without Accept-Encoding (as the bench's autocannon), and prints the server's CPU per request from /proc,
// its main thread's apart from DuckDB's and V8's threads. Then, on CPU 0 too, the same statements run
// directly on DuckDB as bench/direct-duckdb.js runs them (floor-variant.js), three ways: as they are; after
// a wait of 3 ms outside DuckDB before each (as a request waits for Postgres and Redis); after 2 ms of work
// on the main thread before each (as Drey's own JavaScript per request). Each prints its CPU per query, p50,
// mean and p50/mean. Under 10 clients on one core the floor's latencies are skewed (p50 below the mean);
// either per-request constant, a wait that costs no CPU included, takes the skew away and raises the p50.
const { execFileSync, spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, readdirSync, rmSync } = require('node:fs');
const http = require('node:http');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { startDrey } = require('./lib/drey');
const { cpuSecondsOf } = require('./lib/processes');
const { environmentFile } = require('./lib/exports');
const { queryString, selection } = require('./lib/selections');

const checkout = resolve(process.argv[2] ?? '.');
const rounds = Number(process.argv[3] ?? 3);
const requests = Number(process.argv[4] ?? 300);
const P = '/api/service-v0/project/orders/v1';
const VARIANTS = ['plain', 'wait', 'work'];

/** utime + stime in seconds of each thread of a process: its main thread, and the others together. */
function threadSeconds(pid) {
  const split = { main: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const seconds = cpuSecondsOf(`/proc/${pid}/task/${tid}/stat`);
      if (Number(tid) === pid) split.main += seconds;
      else split.others += seconds;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return split;
}

/** One GET on `agent`: its status once the whole body is read. */
function get(agent, url, token) {
  return new Promise((done, fail) => {
    const request = http.get(
      url,
      { agent, headers: { authorization: `Bearer ${token}` } },
      (response) => {
        response.resume();
        response.on('end', () => done(response.statusCode));
        response.on('error', fail);
      },
    );
    request.on('error', fail);
  });
}

/**
 * `count` requests from selection number `first` on, 10 at a time on 10 kept-alive connections of their
 * own (closed at the end: Drey drops idle ones after 5 s, while the floor runs); their latencies in ms.
 */
async function load(drey, first, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  let next = first;
  const latencies = [];
  const client = async () => {
    while (next < first + count) {
      const path = `${P}/datasets/orders_summary/results?${queryString(selection(next++))}`;
      const started = performance.now();
      const status = await get(agent, drey.url + path, drey.token);
      if (status !== 200) throw new Error(`${path} answered ${status}`);
      latencies.push(performance.now() - started);
    }
  };
  try {
    await Promise.all(Array.from({ length: 10 }, client));
  } finally {
    agent.destroy();
  }
  return latencies;
}

const ms = (value) => `${value.toFixed(2)} ms`;

function summary(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const p50 = sorted[sorted.length >> 1];
  return `p50 ${p50.toFixed(1)} ms, mean ${mean.toFixed(1)} ms, p50/mean ${(p50 / mean).toFixed(3)}`;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'drey-uncached-'));
  try {
    const drey = await startDrey({
      root: checkout,
      work,
      name: `uncached_cpu_${process.pid}`,
      projectDir: join(checkout, 'bench', 'project'),
      P,
      log: 'drey.log',
      secret: 'uncached-cpu-secret-of-at-least-32-bytes',
      password: 'uncached-cpu',
      cpu: 0,
      env: { ORDERS_ROWS: '1000000' },
    });
    try {
      execFileSync('taskset', ['-cp', '1', String(process.pid)]);
      const file = environmentFile(drey.dataDir);
      await load(drey, 90_000, 30);
      for (let round = 0; round < rounds; round++) {
        const first = round * 5000;
        const before = threadSeconds(drey.server.pid);
        const latencies = await load(drey, first, requests);
        const after = threadSeconds(drey.server.pid);
        const main = ((after.main - before.main) / requests) * 1000;
        const others = ((after.others - before.others) / requests) * 1000;
        const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
        console.log(
          `round ${round + 1} Drey: ${ms(main + others)} CPU a request (main thread ${ms(main)}), ` +
            `${summary(latencies)}; load ${load1}`,
        );
        for (const variant of VARIANTS) {
          const args = [join(__dirname, 'lib', 'floor-variant.js'), file, String(requests)];
          const run = spawnSync(
            'taskset',
            ['-c', '0', process.execPath, ...args, String(first + 1000), variant],
            { encoding: 'utf8', cwd: checkout },
          );
          if (run.status !== 0) throw new Error(`floor-variant ${variant}: ${run.stderr}`);
          const result = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}');
          console.log(
            `round ${round + 1} DuckDB ${variant}: ${ms(result.cpuMs)} CPU a query ` +
              `(main thread ${ms(result.mainMs)}), ${summary(result.latencies)}`,
          );
        }
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
