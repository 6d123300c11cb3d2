// @ts-check
'use strict';
const autocannon = require('autocannon');

/**
 * What every phase is handed: the server under measurement and the run's settings.
 * @typedef {{ url: string, pid: number, token: string, dataDir: string, projectDir: string, logFile: string,
 *   work: string, seconds: number, warmupSeconds: number, connections: number, rounds: number,
 *   secret: string, serverCpu: number, loadCpu: number }} Context
 */

/**
 * @typedef {{ name: string, rps: number, mean: number, p50: number, p95: number, p99: number, requests: number,
 *   errors: number, non2xx: number, latencies: number[], seconds: number }} LoadResult
 */

/** @param {number[]} sorted @param {number} q */
function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * Latencies as percentiles, in milliseconds.
 * @param {number[]} latencies
 */
function summarize(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(sorted.length, 1),
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
  };
}

/**
 * Runs autocannon against one URL: a warm-up, then the measured run. Latencies are collected per
 * response, since autocannon's own summary has no 95th percentile.
 * @param {string} name
 * @param {{ url: string, headers?: Record<string, string>, connections: number, seconds: number,
 *   warmupSeconds: number, path?: () => string, method?: 'GET' | 'POST', body?: string }} options  `path`
 *   gives a new path per request; `method` and `body` make it a POST (bench/mcp-vs-http.js)
 * @returns {Promise<LoadResult>}
 */
async function measure(name, options) {
  const run = (/** @type {number} */ seconds, /** @type {number[] | null} */ latencies) =>
    new Promise((resolve, reject) => {
      const instance = autocannon(
        {
          url: options.url,
          headers: options.headers,
          ...(options.method && { method: options.method }),
          ...(options.body !== undefined && { body: options.body }),
          connections: options.connections,
          duration: seconds,
          ...(options.path && {
            requests: [{ setupRequest: (request) => ({ ...request, path: options.path?.() }) }],
          }),
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      );
      if (latencies) {
        instance.on('response', (_client, _status, _bytes, responseTime) =>
          latencies.push(responseTime),
        );
      }
    });
  if (options.warmupSeconds > 0) await run(options.warmupSeconds, null);
  /** @type {number[]} */
  const latencies = [];
  const result = /** @type {any} */ (await run(options.seconds, latencies));
  return {
    name,
    rps: result.requests.total / options.seconds,
    ...summarize(latencies),
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    latencies,
    seconds: options.seconds,
  };
}

/**
 * Runs of the same measurement taken at different times, as one: the load of the machine drifts, and
 * alternating two contenders spreads the drift over both.
 * @param {string} name
 * @param {{ latencies: number[], seconds: number, requests: number, errors?: number, non2xx?: number }[]} runs
 */
function combine(name, runs) {
  const latencies = runs.flatMap((run) => run.latencies);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  return {
    name,
    rps: requests / seconds,
    ...summarize(latencies),
    requests,
    errors: runs.reduce((sum, run) => sum + (run.errors ?? 0), 0),
    non2xx: runs.reduce((sum, run) => sum + (run.non2xx ?? 0), 0),
  };
}

module.exports = { measure, summarize, combine };
