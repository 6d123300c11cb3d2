// @ts-check
'use strict';
// `npm run bench`: Drey on Postgres and Redis, pinned to one core, measured against its floors and against
// DuckDB itself by autocannon pinned to the other core (see docs/performance.md). Writes bench/results.md.
// Two Drey servers run one after the other: one serving the benchmark's project (bench/project, the
// generated orders) for the uncached, single-flight and export phases, then one serving the example
// project for the cached request and the floors, which serve that request's bytes.
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');
const Redis = require('ioredis');
const phases = require('./lib/phases');
const { memoryOf, startPinned, waitForLine, waitUntilOk } = require('./lib/processes');
const { barsTable, fixed, machine, table } = require('./lib/report');

const ROOT = join(__dirname, '..');
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const BASE_DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
/** The benchmark's project, with its generated orders table; the cached phase reads the example's rows. */
const BENCH_PROJECT = join(ROOT, 'bench', 'project');
const EXAMPLE_PROJECT = join(ROOT, 'examples', 'expenses');

/** The load generator (this process) runs on the other core: re-run pinned unless already. */
function pinSelf() {
  if (process.env.BENCH_PINNED) return false;
  const check = spawnSync('taskset', ['-c', String(LOAD_CPU), 'true']);
  if (check.status !== 0) {
    throw new Error('taskset is needed, with at least 2 CPUs (the server and the load apart)');
  }
  const run = spawnSync('taskset', ['-c', String(LOAD_CPU), process.execPath, __filename], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  process.exit(run.status ?? 1);
}

/** @param {(client: import('pg').Client) => Promise<unknown>} work */
async function asAdmin(work) {
  const client = new Client({ connectionString: BASE_DATABASE_URL });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Starts Drey pinned to the server's core on a database and a Redis prefix of its own, waits until it is
 * ready, and signs in as admin.
 * @param {{ work: string, name: string, projectDir: string, P: string, log: string, secret: string,
 *   password: string, env?: Record<string, string> }} options
 */
async function startDrey({ work, name, projectDir, P, log, secret, password, env = {} }) {
  const databaseUrl = new URL(BASE_DATABASE_URL);
  databaseUrl.pathname = `/${name}`;
  await asAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  const dataDir = join(work, `data-${name}`);
  const logFile = join(work, log);
  const server = startPinned(
    SERVER_CPU,
    [join(ROOT, 'dist', 'main.js')],
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      PROJECT_DIR: projectDir,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL,
      REDIS_PREFIX: name,
      JWT_SECRET: secret,
      ADMIN_PASSWORD: password,
      METRICS_PUBLIC: 'true',
      // The load comes from one address with 10 connections; the per-caller limits are not what is measured.
      CALLER_MAX_QUERIES: '10000',
      CALLER_MAX_EXPORTS: '10000',
      CALLER_MAX_RENDERS: '10000',
      ...env,
    },
    logFile,
  );
  const started = performance.now();
  const stop = async () => {
    await server.stop();
    await asAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    await dropRedisKeys(name);
  };
  try {
    const url = await waitForLine(logFile, listeningUrl, server, 60_000);
    await waitUntilOk(`${url}/health/ready`, server, 180_000);
    const startSeconds = (performance.now() - started) / 1000;
    const login = await fetch(`${url}${P}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'admin', password }),
    });
    const token = /** @type {{ access_token: string }} */ (await login.json()).access_token;
    return { server, url, token, dataDir, startSeconds, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function main() {
  if (pinSelf()) return;
  const loadAtStart = require('node:os')
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('build first: npx nest build');
  const name = `drey_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const work = mkdtempSync(join(tmpdir(), 'drey-bench-'));
  const secret = randomBytes(32).toString('hex');
  const password = randomBytes(12).toString('hex');
  const common = { work, secret, password, seconds: SECONDS, warmupSeconds: 2, connections: 10 };
  try {
    // The benchmark's own project (bench/project): (e), (c) and (d) on its generated orders table.
    const bench = await startDrey({
      work,
      name,
      projectDir: BENCH_PROJECT,
      P: phases.P,
      log: 'drey.log',
      secret,
      password,
      env: { ORDERS_ROWS: process.env.ORDERS_ROWS || '2000000' },
    });
    let csv, direct, drey, flight;
    try {
      const context = {
        ...common,
        url: bench.url,
        pid: bench.server.pid,
        token: bench.token,
        dataDir: bench.dataDir,
        projectDir: BENCH_PROJECT,
        serverCpu: SERVER_CPU,
      };
      console.log(
        `Drey ready in ${bench.startSeconds.toFixed(1)} s (build of the orders included)`,
      );
      // The export comes first, on the server that has just built: after the load phases, the resident
      // memory also holds the garbage of thousands of requests that V8 has not collected yet, which says
      // nothing of the export. The report gives the memory before, the peak, and the end of the run.
      csv = await phases.csvExport(context);
      console.log('export measured');
      ({ direct, drey } = await phases.uncached(context));
      flight = await phases.singleFlight(context);
      csv.endMb = memoryOf(bench.server.pid).rssMb;
    } finally {
      await bench.stop();
    }

    // The example project (examples/expenses): (b) the cached request, and (a) the floors serving its bytes.
    const example = await startDrey({
      work,
      name: `${name}_example`,
      projectDir: EXAMPLE_PROJECT,
      P: phases.EXAMPLE_P,
      log: 'drey-example.log',
      secret,
      password,
    });
    let http, express, nest, cached, body;
    try {
      const context = {
        ...common,
        url: example.url,
        pid: example.server.pid,
        token: example.token,
        dataDir: example.dataDir,
        projectDir: EXAMPLE_PROJECT,
        serverCpu: SERVER_CPU,
      };
      const cachedReply = await fetch(example.url + phases.CACHED_PATH, {
        headers: { authorization: `Bearer ${example.token}` },
      });
      body = Buffer.from(await cachedReply.arrayBuffer());
      [http, express, nest] = await phases.floors(context, body);
      console.log('floors measured');
      cached = await phases.cached(context);
    } finally {
      await example.stop();
    }
    await report({
      http,
      express,
      nest,
      cached,
      direct,
      drey,
      flight,
      csv,
      bodyBytes: body.length,
      startSeconds: bench.startSeconds,
      loadAtStart,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The URL in Drey's `listening` log line. @param {string} line */
function listeningUrl(line) {
  if (!line.includes('"listening"')) return undefined;
  try {
    return /** @type {{ url: string }} */ (JSON.parse(line)).url;
  } catch {
    return undefined;
  }
}

/** @param {string} prefix */
async function dropRedisKeys(prefix) {
  const redis = new Redis(REDIS_URL);
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 })) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/** @param {any} r */
async function report(r) {
  const ratio = (/** @type {number} */ a, /** @type {number} */ b) => `${fixed((a / b) * 100, 0)}%`;
  const rows = [
    { ...r.http, note: `${r.bodyBytes} bytes after an HS256 check` },
    { ...r.express, note: `same bytes; ${ratio(r.express.rps, r.http.rps)} of node:http` },
    {
      ...r.nest,
      note: `same bytes, returned as a string; ${ratio(r.nest.rps, r.express.rps)} of Express`,
    },
    {
      ...r.cached,
      note: `${ratio(r.cached.rps, r.express.rps)} of Express, ${ratio(r.cached.rps, r.http.rps)} of node:http`,
    },
    { ...r.direct, note: 'orders_summary statement, a new selection each time' },
    {
      ...r.drey,
      note: `p50 ${fixed(r.drey.p50 / r.direct.p50, 2)}× direct (mean ${fixed(r.drey.mean / r.direct.mean, 2)}×, req/s ${fixed(r.drey.rps / r.direct.rps, 2)}×); ${r.drey.non2xx + r.drey.errors} failed`,
    },
    {
      name: '(d) 200 identical cold requests',
      note: `query ran ${r.flight.ran}× (counter), ${r.flight.logged}× (log lines); ${r.flight.identical ? '200 identical bodies' : 'bodies differ'}; ${fixed(r.flight.seconds, 2)} s in all`,
    },
    {
      name: '(e) 1,000,000-row CSV export',
      note: `${r.csv.rows} rows, ${fixed(r.csv.megabytes, 1)} MB in ${fixed(r.csv.seconds, 2)} s; RSS ${fixed(r.csv.beforeMb, 0)} MB before, peak ${fixed(r.csv.peakMb, 0)} MB while streaming (${fixed(r.csv.endMb, 0)} MB after (c) and (d))`,
    },
  ];
  const bars = [
    {
      check: '(b) ≥ 60% of bare Express',
      measured: ratio(r.cached.rps, r.express.rps),
      pass: r.cached.rps >= 0.6 * r.express.rps,
    },
    {
      check: '(b) ≥ 4,000 req/s, p99 < 10 ms',
      measured: `${fixed(r.cached.rps, 0)} req/s, p99 ${fixed(r.cached.p99, 2)} ms`,
      pass: r.cached.rps >= 4000 && r.cached.p99 < 10,
    },
    {
      check: '(c) p50 ≤ 1.15 × direct DuckDB',
      measured: `${fixed(r.drey.p50, 2)} ms vs ${fixed(r.direct.p50, 2)} ms`,
      pass: r.drey.p50 <= 1.15 * r.direct.p50,
    },
    {
      check: '(d) exactly one execution',
      measured: `${r.flight.ran} (counter), ${r.flight.logged} (log)`,
      pass: r.flight.ran === 1 && r.flight.logged === 1 && r.flight.identical,
    },
    {
      check: '(e) peak RSS < 300 MB while streaming',
      measured: `${fixed(r.csv.peakMb, 0)} MB`,
      pass: r.csv.peakMb < 300 && r.csv.rows === 1_000_000,
    },
  ];
  const m = machine();
  const text = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()}. Drey (NODE_ENV=production, Postgres, Redis)`,
    `and every comparison server run on CPU ${SERVER_CPU}; autocannon runs on CPU ${LOAD_CPU}, 10 connections, ${SECONDS} s per`,
    `measurement after a 2 s warm-up. Drey served bench/project (${process.env.ORDERS_ROWS || '2000000'} orders) for (c) to (e),`,
    `started and built in ${fixed(r.startSeconds, 1)} s, then examples/expenses for (a) and (b).`,
    '',
    `Machine: ${m.nproc} CPUs (${m.cpu}), ${m.memoryGb} GB, ${m.os}, Node ${m.node}, DuckDB node-api ${m.duckdb}.`,
    `Load average at the start and at the end of the run: ${r.loadAtStart} and ${m.load} (other work on the`,
    'machine skews every figure, the floors too; the ratios are less affected than the absolute rates).',
    '',
    table(rows),
    '',
    barsTable(bars),
    '',
  ].join('\n');
  // Formatted as the repository's Markdown is, so that the file passes the formatting check.
  const file = join(__dirname, 'results.md');
  const prettier = require('prettier');
  const formatted = await prettier.format(text, {
    ...(await prettier.resolveConfig(file)),
    parser: 'markdown',
  });
  writeFileSync(file, formatted);
  console.log(`\n${formatted}`);
  if (bars.some((bar) => !bar.pass)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
