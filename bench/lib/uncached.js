// @ts-check
'use strict';
// The uncached query against DuckDB running the same statements, and single flight: 200 identical cold
// requests at once must run the query once.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { environmentFile } = require('./exports');
const { combine, measure } = require('./load');
const { startPinned } = require('./processes');
const { inRounds, median, medianRatio } = require('./rounds');
const { queryString, selection } = require('./selections');

/** The benchmark's project (bench/project): the orders datasets. */
const P = '/api/service-v0/project/orders/v1';

/**
 * The uncached query: Drey answering orders_summary with a new selection per request, and the same
 * statements run directly on DuckDB (bench/direct-duckdb.js) on the same core, same concurrency. The two
 * sides alternate in rounds of `seconds` each, which side goes first changing every round, both sides of a
 * round running the same statements; the figures are the medians of the rounds' p50s, and a round is
 * redone when the direct side's p50 moved by more than 10%.
 * @param {import('./load').Context} context
 */
async function uncached(context) {
  const file = environmentFile(context.dataDir);
  // Both sides of a round run the same statements, from selection number round × 5,000 on (distinct for
  // every number below 100,000; a side makes a few hundred requests a round).
  const first = (/** @type {number} */ round) => round * 5000;
  const direct = async (/** @type {number} */ round) => {
    const log = join(context.work, `direct-duckdb-${round}.log`);
    const args = [
      join(__dirname, '..', 'direct-duckdb.js'),
      file,
      context.projectDir,
      String(context.seconds),
      String(context.connections),
      String(first(round)),
    ];
    const child = startPinned(context.serverCpu, args, {}, log);
    const code = await child.exited;
    if (code !== 0) throw new Error(`direct DuckDB run failed: ${readFileSync(log, 'utf8')}`);
    const run = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').pop() ?? '{}');
    return { ...combine('direct', [run]), latencies: undefined };
  };
  const drey = async (/** @type {number} */ round) => {
    let i = first(round);
    const result = await measure('drey', {
      url: `${context.url}${P}/datasets/orders_summary/results`,
      headers: { authorization: `Bearer ${context.token}` },
      connections: context.connections,
      seconds: context.seconds,
      warmupSeconds: round === 0 ? context.warmupSeconds : 0,
      path: () => `${P}/datasets/orders_summary/results?${queryString(selection(i++))}`,
    });
    // Queries autocannon gave up on at the end still run on the server: let them end before the direct
    // side starts on the same core.
    await settled(context, 'orders_summary');
    return { ...result, latencies: undefined };
  };
  const rounds = await inRounds({
    rounds: context.rounds,
    label: 'uncached',
    floor: (/** @type {any} */ round) => round.direct.p50,
    round: async (index) => {
      const round = /** @type {{ direct: any, drey: any }} */ ({});
      const sides = [
        async () => (round.direct = await direct(index)),
        async () => (round.drey = await drey(index)),
      ];
      if (index % 2 === 1) sides.reverse();
      for (const side of sides) await side();
      console.log(
        `uncached round ${index + 1}: direct p50 ${round.direct.p50.toFixed(1)} ms, Drey ${round.drey.p50.toFixed(1)} ms`,
      );
      return round;
    },
  });
  const pick = (/** @type {'direct' | 'drey'} */ side, /** @type {string} */ field) =>
    median(rounds.kept.map((round) => round[side][field]));
  const figures = (/** @type {'direct' | 'drey'} */ side) => ({
    rps: pick(side, 'rps'),
    mean: pick(side, 'mean'),
    p50: pick(side, 'p50'),
    p99: pick(side, 'p99'),
    failed: rounds.kept.reduce(
      (sum, round) => sum + (round[side].non2xx ?? 0) + (round[side].errors ?? 0),
      0,
    ),
  });
  const times = (/** @type {string} */ field) =>
    medianRatio(
      rounds.kept,
      (round) => round.drey[field],
      (round) => round.direct[field],
    );
  return {
    direct: figures('direct'),
    drey: figures('drey'),
    times: { p50: times('p50'), mean: times('mean'), rps: times('rps') },
    redos: rounds.redos,
    spread: rounds.spread,
  };
}

/**
 * Queries run so far for a dataset, from Drey's metrics.
 * @param {import('./load').Context} context
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
 * @param {import('./load').Context} context
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
 * @param {import('./load').Context} context
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
  const logged = readFileSync(context.logFile, 'utf8')
    .split('\n')
    .filter(
      (line) => line.includes('"dataset query"') && line.includes('"requestId":"bench-d-'),
    ).length;
  const identical = replies.every(
    (reply) => reply.status === 200 && reply.body === replies[0].body,
  );
  return { ran, logged, identical, seconds };
}

module.exports = { uncached, singleFlight };
