// @ts-check
'use strict';
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { combine, measure } = require('./load');
const { memoryOf, resetPeak, startPinned, waitForLine } = require('./processes');
const { queryString, selection } = require('./selections');

/** The benchmark's project (bench/project): the orders datasets of (c), (d) and (e). */
const P = '/api/service-v0/project/orders/v1';
/** The example project (examples/expenses), which (b) and the floors read. */
const EXAMPLE_P = '/api/service-v0/project/expenses/v1';
/** The cached request: 100 expense rows of the example, as in the issue, behind a token. */
const CACHED_PATH = `${EXAMPLE_P}/datasets/expense_transactions/results?x_limit=100`;

/**
 * @typedef {{ url: string, pid: number, token: string, dataDir: string, projectDir: string,
 *   work: string, seconds: number, warmupSeconds: number, connections: number,
 *   secret: string, serverCpu: number }} Context
 */

/**
 * The floors: bare node:http and bare Express 5 serving Drey's own bytes for the cached request after the
 * same JWT check, one after the other on the server's core; and, for reference, a bare Nest 12 app.
 * @param {Context} context
 * @param {Buffer} body
 */
async function floors(context, body) {
  const bodyFile = join(context.work, 'cached-body.json');
  writeFileSync(bodyFile, body);
  const results = [];
  for (const [name, script] of [
    ['(a) node:http floor', 'floor-http.js'],
    ['(a) Express 5 floor', 'floor-express.js'],
    ['bare Nest 12 (reference)', 'floor-nest.js'],
  ]) {
    const log = join(context.work, `${script}.log`);
    const child = startPinned(
      context.serverCpu,
      [join(__dirname, '..', script), bodyFile],
      { JWT_SECRET: context.secret },
      log,
    );
    try {
      const url = await waitForLine(
        log,
        (line) => (line.startsWith('http://') ? line.trim() : undefined),
        child,
        10000,
      );
      results.push(await measure(name, loadOptions(context, url + CACHED_PATH)));
    } finally {
      await child.stop();
    }
  }
  return results;
}

/** @param {Context} context @param {string} url */
function loadOptions(context, url) {
  return {
    url,
    headers: { authorization: `Bearer ${context.token}` },
    connections: context.connections,
    seconds: context.seconds,
    warmupSeconds: context.warmupSeconds,
  };
}

/** @param {Context} context */
function cached(context) {
  return measure('(b) Drey, cached result', loadOptions(context, context.url + CACHED_PATH));
}

/** Rounds of the uncached phase: each side runs in every round, first and second by turns. */
const UNCACHED_ROUNDS = 6;

/**
 * The uncached query: Drey answering orders_summary with a new selection per request, and the same
 * statements run directly on DuckDB on the same core. The machine's speed drifts by 10 to 20% over tens of
 * seconds (other tenants), so the two sides alternate in short rounds, which side goes first changing
 * every round, and each side's latencies are pooled; each side runs twice the measurement time in all.
 * @param {Context} context
 */
async function uncached(context) {
  const { readFileSync } = require('node:fs');
  // The pointer's first line is the build's id; the second names its project.
  const current = readFileSync(join(context.dataDir, 'environments', 'current'), 'utf8').split('\n')[0].trim();
  const file = join(context.dataDir, 'environments', `${current}.duckdb`);
  const share = (context.seconds * 2) / UNCACHED_ROUNDS;
  const directRuns = [];
  const dreyRuns = [];
  // Both sides of a round run the same statements, from selection number round × 5,000 on (distinct for
  // every number below 100,000; a side makes a few hundred requests a round).
  const first = (/** @type {number} */ round) => round * 5000;
  const direct = async (/** @type {number} */ round) => {
    const log = join(context.work, `direct-duckdb-${round}.log`);
    const args = [
      join(__dirname, '..', 'direct-duckdb.js'),
      file,
      context.projectDir,
      String(share),
      String(context.connections),
      String(first(round)),
    ];
    const child = startPinned(context.serverCpu, args, {}, log);
    const code = await child.exited;
    if (code !== 0) throw new Error(`direct DuckDB run failed: ${readFileSync(log, 'utf8')}`);
    directRuns.push(JSON.parse(readFileSync(log, 'utf8').trim().split('\n').pop() ?? '{}'));
  };
  const drey = async (/** @type {number} */ round) => {
    let i = first(round);
    dreyRuns.push(
      await measure('(c) Drey, uncached query', {
        ...loadOptions(context, `${context.url}${P}/datasets/orders_summary/results`),
        seconds: share,
        warmupSeconds: round === 0 ? context.warmupSeconds : 0,
        path: () => `${P}/datasets/orders_summary/results?${queryString(selection(i++))}`,
      }),
    );
  };
  for (let round = 0; round < UNCACHED_ROUNDS; round++) {
    const order = round % 2 === 0 ? [direct, drey] : [drey, direct];
    for (const side of order) await side(round);
  }
  return {
    direct: combine('(c) same query, directly on DuckDB', directRuns),
    drey: combine('(c) Drey, uncached query', dreyRuns),
  };
}

/**
 * Queries run so far for a dataset, from Drey's metrics.
 * @param {Context} context
 * @param {string} dataset
 */
async function executions(context, dataset) {
  const text = await (await fetch(`${context.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((candidate) =>
      candidate.startsWith(
        `drey_dataset_query_executions_total{dataset="${dataset}",kind="result"}`,
      ),
    );
  return Number(line?.split(' ').pop() ?? 0);
}

/**
 * Waits until no query of a dataset is running any more: requests the load generator gave up on when its
 * time was over still run to their end on the server, and would be counted in the next phase.
 * @param {Context} context
 * @param {string} dataset
 */
async function settled(context, dataset) {
  let last = await executions(context, dataset);
  let steady = 0;
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await executions(context, dataset);
    // Unchanged over three looks in a row (1.5 s): longer than a queued query takes to finish.
    steady = now === last ? steady + 1 : 0;
    if (steady === 3) return now;
    last = now;
  }
  throw new Error(`queries of ${dataset} were still running after 30 s`);
}

/**
 * 200 identical requests at once for a result nobody asked for yet: how many times the query ran, by
 * Drey's counter and by its log lines (each request carries an id the log line of its query repeats).
 * @param {Context} context
 */
async function singleFlight(context) {
  const path = `${P}/datasets/orders_summary/results?order_dates=2023-02-02&order_dates=2024-11-11&order_regions=West&order_regions=Central`;
  const before = await settled(context, 'orders_summary');
  const started = performance.now();
  const replies = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const reply = await fetch(context.url + path, {
        headers: { authorization: `Bearer ${context.token}`, 'x-request-id': `bench-d-${i}` },
      });
      return { status: reply.status, body: await reply.text() };
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const ran = (await executions(context, 'orders_summary')) - before;
  const { readFileSync } = require('node:fs');
  const logged = readFileSync(join(context.work, 'drey.log'), 'utf8')
    .split('\n')
    .filter(
      (line) => line.includes('"dataset query"') && line.includes('"requestId":"bench-d-'),
    ).length;
  const identical = replies.every(
    (reply) => reply.status === 200 && reply.body === replies[0].body,
  );
  return { ran, logged, identical, seconds };
}

/**
 * A 1,000,000-row CSV export, read as it arrives, with the server's peak resident memory meanwhile.
 * @param {Context} context
 */
async function csvExport(context) {
  const before = memoryOf(context.pid).rssMb;
  resetPeak(context.pid);
  const started = performance.now();
  const reply = await fetch(`${context.url}${P}/datasets/orders_detail/results?x_limit=1000000`, {
    headers: { authorization: `Bearer ${context.token}`, accept: 'text/csv' },
  });
  if (!reply.ok || !reply.body) throw new Error(`CSV export answered ${reply.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of reply.body) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  const { peakMb } = memoryOf(context.pid);
  return { rows: lines - 1, megabytes: bytes / 1024 ** 2, seconds, beforeMb: before, peakMb };
}

module.exports = { floors, cached, uncached, singleFlight, csvExport, CACHED_PATH, P, EXAMPLE_P };
