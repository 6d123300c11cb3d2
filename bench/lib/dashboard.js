// @ts-check
'use strict';
// The PNG dashboard: its first render of a selection once Chromium is warm, and the same selection asked
// for again, timed at the server (the `durationMs` of Drey's request log line, found by the request id the
// bench sends), so the figures leave out the client and the loopback.
const { closeSync, openSync, readSync, fstatSync } = require('node:fs');
const { chromiumPath } = require('./drey');
const { median } = require('./rounds');
const { EXAMPLE_P } = require('./cached');

const DASHBOARD_PATH = `${EXAMPLE_P}/dashboards/expenses_dashboard/results`;
/** Repeats of one selection: at most this many, and at most the measurement's seconds of them. */
const MAX_REPEATS = 50;
const MIN_REPEATS = 5;

/**
 * The i-th selection of the dashboard: a date range of 2024 not asked for before (distinct for i < 300).
 * @param {number} i
 */
function dashboardSelection(i) {
  const day = (/** @type {number} */ n) =>
    new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
  const start = i % 60;
  const end = 200 + Math.floor(i / 60) * 30 + (i % 7);
  return `date_range=${day(start)}&date_range=${day(Math.min(end, 365))}`;
}

/**
 * Drey's request log lines, read from where the last read stopped, by request id. Bounded by what the
 * bench asks: only lines of ids it is waiting for are kept.
 */
class RequestLog {
  /** @param {string} file */
  constructor(file) {
    this.file = file;
    this.offset = 0;
    this.rest = '';
  }

  /**
   * The server's duration of a request, waiting (up to 5 s) for its log line: the line is written when
   * the response has finished, which the client may see a moment before.
   * @param {string} id
   */
  async durationOf(id) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const found = this.scan(id);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no request log line for ${id}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** @param {string} id */
  scan(id) {
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size > this.offset) {
        const buffer = Buffer.alloc(size - this.offset);
        readSync(fd, buffer, 0, buffer.length, this.offset);
        this.offset = size;
        this.rest += buffer.toString('utf8');
      }
    } finally {
      closeSync(fd);
    }
    const lines = this.rest.split('\n');
    this.rest = lines.pop() ?? '';
    let found;
    for (const line of lines) {
      if (!line.includes(`"requestId":"${id}"`) || !line.includes('"msg":"request"')) continue;
      found = /** @type {{ durationMs: number }} */ (JSON.parse(line)).durationMs;
    }
    return found;
  }
}

/**
 * @param {import('./load').Context} context
 * @param {RequestLog} log
 * @param {string} query
 * @param {string} id
 */
async function render(context, log, query, id) {
  const started = performance.now();
  const reply = await fetch(`${context.url}${DASHBOARD_PATH}?${query}`, {
    headers: { authorization: `Bearer ${context.token}`, 'x-request-id': id },
  });
  const body = Buffer.from(await reply.arrayBuffer());
  const clientMs = performance.now() - started;
  if (reply.status !== 200) {
    throw new Error(
      `the PNG dashboard answered ${reply.status}: ${body.toString('utf8').slice(0, 200)}`,
    );
  }
  if (
    reply.headers.get('content-type') !== 'image/png' ||
    body.subarray(1, 4).toString() !== 'PNG'
  ) {
    throw new Error(`the PNG dashboard answered ${reply.headers.get('content-type')}, not a PNG`);
  }
  return { serverMs: await log.durationOf(id), clientMs, bytes: body.length };
}

/**
 * One render to start Chromium (the cold one, reported apart), then `rounds × 2` first renders of new
 * selections, then the last of them again and again: at most 50 times or `seconds`, at least 5.
 * @param {import('./load').Context} context
 */
async function dashboardPhase(context) {
  const log = new RequestLog(context.logFile);
  const tag = `bench-png-${Date.now().toString(36)}`;
  const cold = await render(context, log, dashboardSelection(0), `${tag}-cold`);
  const firsts = [];
  const count = context.rounds * 2;
  for (let i = 1; i <= count; i++) {
    firsts.push(await render(context, log, dashboardSelection(i), `${tag}-first-${i}`));
  }
  const repeats = [];
  const until = performance.now() + context.seconds * 1000;
  while (
    repeats.length < MIN_REPEATS ||
    (repeats.length < MAX_REPEATS && performance.now() < until)
  ) {
    repeats.push(
      await render(context, log, dashboardSelection(count), `${tag}-again-${repeats.length}`),
    );
  }
  const serverMs = (/** @type {{ serverMs: number }[]} */ runs) => runs.map((run) => run.serverMs);
  return {
    browser: chromiumPath(),
    coldMs: cold.serverMs,
    firstCount: firsts.length,
    firstP50: median(serverMs(firsts)),
    firstMax: Math.max(...serverMs(firsts)),
    repeatCount: repeats.length,
    repeatP50: median(serverMs(repeats)),
    repeatMax: Math.max(...serverMs(repeats)),
    repeatClientP50: median(repeats.map((run) => run.clientMs)),
    bytes: repeats[0].bytes,
  };
}

module.exports = { dashboardPhase, dashboardSelection, DASHBOARD_PATH };
