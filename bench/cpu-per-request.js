#!/usr/bin/env node
'use strict';
// The server's CPU time per cached read, for comparing two builds of Drey without the bench's other phases:
//   node bench/cpu-per-request.js <checkout> [label] [rounds]
// <checkout> is a folder with a built Drey (dist/main.js) and examples/expenses: this one, or a worktree of
// another commit, run alternately. Drey runs pinned to CPU 0 on a database and Redis prefix of its own;
// autocannon (this process) on CPU 1 reads expense_transactions (x_limit=100) with 10 connections for 2 s,
// then `rounds` (default 3) rounds of 10 s, each printed with the server's utime+stime per request from /proc.
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const autocannon = require('autocannon');
const { Client } = require('pg');
const Redis = require('ioredis');
const { startPinned, waitForLine, waitUntilOk } = require('./lib/processes');

const checkout = resolve(process.argv[2] ?? '.');
const label = process.argv[3] ?? checkout;
const rounds = Number(process.argv[4] ?? 3);
const BASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const P = '/api/service-v0/project/expenses/v1';
const PATH = `${P}/datasets/expense_transactions/results?x_limit=100`;
const name = `cpu_per_request_${process.pid}`;

/** utime + stime of a process in seconds (USER_HZ is 100 on Linux). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function sql(text) {
  const client = new Client({ connectionString: BASE });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function load(url, token, duration) {
  return new Promise((done, fail) =>
    autocannon(
      { url, connections: 10, duration, headers: { authorization: `Bearer ${token}` } },
      (error, result) => (error ? fail(error) : done(result)),
    ),
  );
}

async function main() {
  const databaseUrl = new URL(BASE);
  databaseUrl.pathname = `/${name}`;
  await sql(`CREATE DATABASE "${name}"`);
  const work = mkdtempSync(join(tmpdir(), 'drey-cpu-'));
  const logFile = join(work, 'drey.log');
  // Pinned and waited for as npm run bench starts Drey (bench/lib/processes.js).
  const server = startPinned(
    0,
    [join(checkout, 'dist', 'main.js')],
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      PROJECT_DIR: join(checkout, 'examples', 'expenses'),
      DATA_DIR: join(work, 'data'),
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
      REDIS_PREFIX: name,
      JWT_SECRET: 'cpu-per-request-secret-of-at-least-32-bytes',
      ADMIN_PASSWORD: 'cpu-per-request',
      CALLER_MAX_QUERIES: '10000',
    },
    logFile,
  );
  try {
    const url = await waitForLine(
      logFile,
      (line) => /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1],
      server,
      60_000,
    );
    await waitUntilOk(`${url}/health/ready`, server, 180_000);
    const login = await fetch(`${url}${P}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'admin', password: 'cpu-per-request' }),
    });
    const { access_token: token } = await login.json();
    execFileSync('taskset', ['-cp', '1', String(process.pid)]);
    await load(url + PATH, token, 2);
    for (let round = 1; round <= rounds; round++) {
      const before = cpuSeconds(server.pid);
      const result = await load(url + PATH, token, 10);
      const perRequest = ((cpuSeconds(server.pid) - before) / result.requests.total) * 1e6;
      console.log(
        `${label} round ${round}: ${Math.round(perRequest)} µs of server CPU a request, ` +
          `${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ` +
          `${result.non2xx} non-2xx`,
      );
    }
  } finally {
    await server.stop();
    await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
    for await (const keys of redis.scanStream({ match: `${name}*`, count: 500 })) {
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
