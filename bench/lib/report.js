// @ts-check
'use strict';
// bench/results.md: what was measured, each figure beside its floor from the same run, and the issue's
// bars, which are for people: a missed bar does not fail the run. renderResults is pure (the figures in,
// Markdown out), so test/bench.e2e-spec.ts checks it without measuring anything.
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
  };
}

/** The load average, as `uptime` prints it. */
function loadAverage() {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

/** @param {number} value @param {number} digits */
function fixed(value, digits = 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A whole number with thousands separators. @param {number} value */
function int(value) {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-';
}

/** @param {number} value a ratio, as a percentage */
function percent(value) {
  return Number.isFinite(value) ? `${Math.round(value * 100)}%` : '-';
}

/** @param {number} redos @param {number} spread */
function steadiness(redos, spread) {
  const moved = `floor moved ${percent(spread)} over the rounds kept`;
  return redos > 0 ? `${moved}, ${redos} redone` : moved;
}

/** @param {string[]} header @param {string[][]} rows */
function markdownTable(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

/**
 * @typedef {{ check: string, measured: string, pass: boolean | null }} Bar  pass null: nothing to judge
 */

/** @param {any} r the run's figures @returns {Bar[]} */
function bars(r) {
  /** @type {Bar[]} */
  const list = [];
  for (const result of r.exports ?? []) {
    const name = `export ${result.format}`;
    if (!result.served) {
      const why = result.failed ? `answered ${result.failed}` : 'not served (406)';
      list.push({ check: `${name}: rows/s and peak RSS`, measured: why, pass: null });
      continue;
    }
    if (result.floor) {
      list.push({
        check: `${name} ≥ 65% of ${result.floorName} rows/s`,
        measured: `${percent(result.ratio)} (medians ${int(result.rowsPerSecond)} and ${int(result.floorRowsPerSecond)})`,
        pass: result.ratio >= 0.65 && result.rows === result.floorRows,
      });
    } else {
      list.push({
        check: `${name} ≥ 300,000 rows/s`,
        measured: `${int(result.rowsPerSecond)} rows/s`,
        pass: result.rowsPerSecond >= 300_000,
      });
    }
    list.push({
      check: `${name}: server peak RSS < 300 MB`,
      measured: `${int(result.peakMb)} MB`,
      pass: result.peakMb < 300,
    });
  }
  if (r.dashboard) {
    list.push({
      check: 'PNG dashboard, first warm render ≤ 300 ms (p50 at the server)',
      measured: `${fixed(r.dashboard.firstP50, 1)} ms`,
      pass: r.dashboard.firstP50 <= 300,
    });
    list.push({
      check: 'PNG dashboard, same selections again ≤ 5 ms p50 at the server',
      measured: `${fixed(r.dashboard.repeatP50, 2)} ms`,
      pass: r.dashboard.repeatP50 <= 5,
    });
  }
  if (r.cached) {
    const f = r.cached.figures;
    for (const [drey, floor, label] of [
      ['drey', 'http', 'plain'],
      ['dreyCompressed', 'httpCompressed', 'gzip, br'],
    ]) {
      list.push({
        check: `cached read (${label}) ≥ 45% of node:http req/s`,
        measured: `${percent(f[drey].share)} (medians ${int(f[drey].rps)} and ${int(f[floor].rps)})`,
        pass: f[drey].share >= 0.45,
      });
      list.push({
        check: `cached read (${label}) p99 ≤ 5 ms`,
        measured: `${fixed(f[drey].p99, 2)} ms`,
        pass: f[drey].p99 <= 5,
      });
    }
  }
  if (r.tail) {
    list.push({
      check: 'cached read p99 during an export ≤ 2× without',
      measured: `${fixed(r.tail.p99Ratio, 2)}× (medians ${fixed(r.tail.loaded.p99, 2)} and ${fixed(r.tail.quiet.p99, 2)} ms)`,
      pass: r.tail.p99Ratio <= 2,
    });
  }
  if (r.uncached) {
    const times = r.uncached.times.p50;
    list.push({
      check: 'uncached query p50 ≤ 1.10× direct DuckDB',
      measured: `${fixed(times, 2)}× (medians ${fixed(r.uncached.drey.p50, 1)} and ${fixed(r.uncached.direct.p50, 1)} ms)`,
      pass: times <= 1.1,
    });
  }
  if (r.startup) {
    list.push({
      check:
        'first start on Postgres and Redis ready ≤ 10 s (a new database, its first build included)',
      measured: `${fixed(r.startup.seconds, 1)} s`,
      pass: r.startup.seconds <= 10,
    });
  }
  if (r.flight) {
    list.push({
      check: '200 identical cold requests: one execution',
      measured: `${r.flight.ran} (counter), ${r.flight.logged} (log)`,
      pass: r.flight.ran === 1 && r.flight.logged === 1 && r.flight.identical,
    });
  }
  return list;
}

/** @param {Bar[]} list */
function barsTable(list) {
  return markdownTable(
    ['Bar', 'Measured', ''],
    list.map((bar) => [
      bar.check,
      bar.measured,
      bar.pass === null ? '—' : bar.pass ? 'pass' : '**missed**',
    ]),
  );
}

/** @param {any} r */
function exportsSection(r) {
  const rows = r.exports.map((/** @type {any} */ e) => {
    if (!e.served) {
      const why = e.failed ? `answered ${e.failed}` : 'not served (406)';
      return [
        e.format,
        why,
        e.floorName,
        '-',
        '-',
        '-',
        '-',
        '-',
        e.message ? String(e.message).replaceAll('|', '\\|').slice(0, 120) : '',
      ];
    }
    const notes = [
      `${int(e.rows)} rows (${e.counted})`,
      e.floor
        ? `floor ${int(e.floorRows)} rows, peak RSS ${int(e.floorPeakMb)} MB`
        : 'absolute bar',
      `server RSS ${int(e.beforeMb)} MB before`,
      e.floor ? steadiness(e.redos, e.spread) : '',
      e.failedRounds ? `${e.failedRounds} rounds failed` : '',
    ].filter(Boolean);
    return [
      e.format,
      int(e.rowsPerSecond),
      e.floorName,
      e.floor ? int(e.floorRowsPerSecond) : '—',
      e.floor ? percent(e.ratio) : '—',
      int(e.peakMb),
      fixed(e.megabytes, 1),
      fixed(e.seconds, 2),
      notes.join('; '),
    ];
  });
  return [
    `## Exports: ${int(r.ordersRows)} rows of orders_detail`,
    '',
    'Drey answering `x_format=<format>` for every row (read as it arrives; binary formats counted after',
    'the timing), against DuckDB producing the same statement, with the same selections, on the same core',
    "(bench/floor-duckdb-export.js): its own `COPY (...) TO '<local file>'` writer where it has one. DuckDB",
    'has no Arrow IPC writer here (its arrow extension cannot be installed), so the Arrow floor is its own',
    'writer of a columnar binary format, `COPY ... (FORMAT parquet)`.',
    "Excel's bar is absolute. Peak RSS is the server's `VmHWM`, reset before each export; the highest of the",
    'rounds.',
    '',
    markdownTable(
      [
        'Format',
        'Drey rows/s',
        'Floor',
        'Floor rows/s',
        'Drey / floor',
        'Peak RSS MB',
        'MB',
        's',
        'Notes',
      ],
      rows,
    ),
  ].join('\n');
}

/** @param {any} r */
function dashboardSection(r) {
  const d = r.dashboard;
  return [
    '## PNG dashboard (expenses_dashboard)',
    '',
    "Times at the server (the `durationMs` of Drey's request log line), sequential requests with a token;",
    `browser: ${d.browser ?? "Drey's default"}.`,
    '',
    markdownTable(
      ['Measurement', 'ms', 'Notes'],
      [
        ['first render, Chromium cold', fixed(d.coldMs, 1), 'starts the browser; no bar'],
        [
          'first render of a new selection, p50',
          fixed(d.firstP50, 1),
          `${d.firstCount} selections, the slowest ${fixed(d.firstMax, 1)} ms`,
        ],
        [
          'same selections again, p50',
          fixed(d.repeatP50, 2),
          `${d.repeatCount} requests, the slowest ${fixed(d.repeatMax, 2)} ms; ${fixed(d.repeatClientP50, 2)} ms p50 at the client; ${int(d.bytes)} bytes`,
        ],
      ],
    ),
  ].join('\n');
}

/** @param {any} r */
function cachedSection(r) {
  const c = r.cached;
  const f = c.figures;
  const row = (
    /** @type {string} */ name,
    /** @type {string} */ key,
    /** @type {string} */ floor,
    /** @type {string} */ note,
  ) => [
    name,
    int(f[key].rps),
    fixed(f[key].p50, 2),
    fixed(f[key].p99, 2),
    percent(f[key].share),
    [note, f[key].non2xx ? `${f[key].non2xx} failed` : ''].filter(Boolean).join('; '),
  ];
  const dreyZip = c.dreyEncoding
    ? `Drey answered Content-Encoding ${c.dreyEncoding}`
    : 'Drey answered uncompressed: the floors sent brotli';
  return [
    '## Cached read (expense_transactions, 100 rows, with a token)',
    '',
    `The same bytes (${int(c.plainBytes)} plain, ${int(c.compressedBytes)} as ${c.encoding}) from bare`,
    '`node:http` and bare Express 5 after the same HS256 check (bench/floor-http.js, bench/floor-express.js;',
    'compressed beforehand, as a cache keeping compressed bodies would send them), and from a bare Nest 12',
    `app for reference. Medians of the rounds; ${steadiness(c.redos, c.spread)} (node:http, plain).`,
    '',
    markdownTable(
      ['Server', 'req/s', 'p50 ms', 'p99 ms', 'of node:http (per round)', 'Notes'],
      [
        row('node:http', 'http', 'the floor'),
        row('Express 5', 'express', ''),
        row('Nest 12 (reference)', 'nest', ''),
        row('Drey', 'drey', ''),
        row('node:http, `gzip, br`', 'httpCompressed', 'the floor'),
        row('Express 5, `gzip, br`', 'expressCompressed', ''),
        row('Drey, `gzip, br`', 'dreyCompressed', dreyZip),
      ],
    ),
  ].join('\n');
}

/** @param {any} r */
function tailSection(r) {
  const t = r.tail;
  return [
    '## Cached read during an export',
    '',
    `100 orders (orders_detail, \`x_limit=100\`, cached) read by autocannon, without an export and while`,
    `a second client (bench/export-loop.js, on the load's core) downloads ${t.format} exports of every row`,
    `one after another; alternating rounds, medians; ${steadiness(t.redos, t.spread)} (requests/s without).`,
    '',
    markdownTable(
      ['Cached read', 'req/s', 'p50 ms', 'p99 ms'],
      [
        ['without an export', int(t.quiet.rps), fixed(t.quiet.p50, 2), fixed(t.quiet.p99, 2)],
        ['during an export', int(t.loaded.rps), fixed(t.loaded.p50, 2), fixed(t.loaded.p99, 2)],
      ],
    ),
    '',
    `p99 during an export / without, the median of the rounds' own ratios: ${fixed(t.p99Ratio, 2)}×.`,
    ...(t.non2xx ? ['', `${t.non2xx} reads failed.`] : []),
  ].join('\n');
}

/** @param {any} r */
function uncachedSection(r) {
  const u = r.uncached;
  const line = (/** @type {string} */ name, /** @type {any} */ side) => [
    name,
    fixed(side.rps, 1),
    fixed(side.mean, 1),
    fixed(side.p50, 1),
    fixed(side.p99, 1),
    side.failed ? `${side.failed} failed` : '',
  ];
  return [
    '## Uncached query (orders_summary, a new selection each time)',
    '',
    'Drey against the very statements (compiled by Drey) run with @duckdb/node-api on the same environment',
    `file, same core, same concurrency (bench/direct-duckdb.js); medians of the rounds' figures;`,
    `${steadiness(u.redos, u.spread)} (direct p50). Drey / direct, the median of the rounds' own ratios:`,
    `p50 ${fixed(u.times.p50, 2)}×, mean ${fixed(u.times.mean, 2)}×, requests/s ${fixed(u.times.rps, 2)}×.`,
    '',
    markdownTable(
      ['Side', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'Notes'],
      [line('directly on DuckDB', u.direct), line('Drey', u.drey)],
    ),
  ].join('\n');
}

/** @param {any} r */
function flightSection(r) {
  const f = r.flight;
  return [
    '## Single flight',
    '',
    `200 identical requests at once for a result nobody asked for: the query ran ${f.ran}× by Drey's counter,`,
    `${f.logged}× by its log lines; ${f.identical ? '200 identical bodies' : '**bodies differ or failed**'};`,
    `${fixed(f.seconds, 2)} s in all.`,
  ].join('\n');
}

/** @param {any} r */
function startupSection(r) {
  const steps = /** @type {{ step: string, atMs: number }[]} */ (r.startup.steps);
  return [
    '## Start-up (examples/expenses, a new database)',
    '',
    `From the process's start until \`/health/ready\` answered 200: ${fixed(r.startup.seconds, 1)} s, on one`,
    "core (CPU 0), the example's first build included. The server's own `start-up: ...` lines (each step's",
    "milliseconds since its process started; the build's end comes after the last, once it listens):",
    '',
    markdownTable(
      ['Step', 'at ms', 'ms since the step before'],
      steps.map((step, index) => [
        step.step,
        int(step.atMs),
        index === 0 ? '-' : int(step.atMs - steps[index - 1].atMs),
      ]),
    ),
  ].join('\n');
}

/**
 * The results file, from the run's figures (each phase's key present only if it ran).
 * @param {any} r
 */
function renderResults(r) {
  const m = r.machine;
  const sections = [
    r.exports && exportsSection(r),
    r.dashboard && dashboardSection(r),
    r.cached && cachedSection(r),
    r.tail && tailSection(r),
    r.uncached && uncachedSection(r),
    r.flight && flightSection(r),
    r.startup && startupSection(r),
    ...(r.unmeasured ?? []).map(
      (/** @type {{ phase: string, message: string }} */ failed) =>
        `## Not measured: ${failed.phase}\n\n${failed.message.split('\n')[0]}`,
    ),
  ].filter(Boolean);
  return [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\`${r.partial ? ` (phases: ${r.phases.join(', ')})` : ''} on ${r.finishedAt}, in ${fixed(r.minutes, 1)}`,
    `minutes. Drey (NODE_ENV=production, Postgres, Redis) and every floor ran on CPU ${r.serverCpu}; the load`,
    `(autocannon, ${r.connections} connections) on CPU ${r.loadCpu}. Each measurement ran ${r.rounds} round${r.rounds === 1 ? '' : 's'} of ${r.seconds} s`,
    'alternating with its floor, which goes first changing every round. A ratio is the median of the',
    "rounds' own ratios (Drey and its floor seconds apart); the other figures are medians over the rounds.",
    'A measurement whose floor moved by more than 10% between rounds was redone (at most twice; the',
    'sections say so). The bars below are for people: the run exits 0 whatever they say.',
    '',
    `Machine: ${m.nproc} CPUs (${m.cpu}), ${m.memoryGb} GB, ${m.os}, Node ${m.node}, DuckDB node-api ${m.duckdb}.`,
    `Load average before and after the run: ${r.loadBefore} and ${r.loadAfter}. Other work on the machine`,
    'slows Drey and its floors alike; the ratios are steadier than the absolute figures.',
    '',
    '## Bars',
    '',
    barsTable(bars(r)),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}

/**
 * Several runs (one per Node line, `--nodes`): the bars side by side, each run's measured figure in its
 * column, then each run's whole report, its headings one level down.
 * @param {any[]} runs
 */
function renderRuns(runs) {
  const names = runs.map((r) => `Node ${r.machine.node}`);
  const perRun = runs.map((r) => new Map(bars(r).map((bar) => [bar.check, bar])));
  const checks = [...new Set(perRun.flatMap((list) => [...list.keys()]))];
  const cell = (/** @type {Bar | undefined} */ bar) =>
    bar ? `${bar.measured}${bar.pass === false ? ' **missed**' : ''}` : '-';
  return [
    '# Benchmark results',
    '',
    `${runs.length} runs of \`npm run bench\`, one after the other on the same machine, one per Node binary`,
    '(`--nodes`): Drey, its floors and the load ran on that Node. Each ratio is against a floor measured in',
    'the same run, on the same Node: compare the ratios across the lines, not the absolute figures. The',
    "request context's and promise machinery's cost differs between the lines: the cached read's share of",
    'bare `node:http` shows it.',
    '',
    '## Bars, side by side',
    '',
    markdownTable(
      ['Bar', ...names],
      checks.map((check) => [check, ...perRun.map((list) => cell(list.get(check)))]),
    ),
    '',
    ...runs.flatMap((r, index) => [
      renderResults(r)
        .replace(/^# Benchmark results$/m, `# ${names[index]}`)
        .replace(/^#/gm, '##'),
      '',
    ]),
  ].join('\n');
}

module.exports = { machine, loadAverage, renderResults, renderRuns, bars, fixed };
