// @ts-check
'use strict';
// The command line of `npm run bench` (node bench/run.js): which phases to run, for how long, and where
// the results go. Pure, so that test/bench.e2e-spec.ts checks it and the usage text docs/performance.md
// quotes.
const { parseArgs } = require('node:util');

/** The phases, in the order a full run makes them, with the server each needs. */
const PHASES = [
  {
    name: 'exports',
    server: 'orders',
    about: 'each export format (x_format) against DuckDB writing the same 1,000,000 rows',
  },
  { name: 'flight', server: 'orders', about: '200 identical cold requests at once run one query' },
  {
    name: 'uncached',
    server: 'orders',
    about: 'orders_summary, a new selection each time, against the same statements on DuckDB',
  },
  {
    name: 'tail',
    server: 'orders',
    about: 'a cached read while 1,000,000-row exports run on a second client, against it without',
  },
  {
    name: 'dashboard',
    server: 'example',
    about: 'the PNG dashboard: first render of a selection (Chromium warm), then the same again',
  },
  {
    name: 'cached',
    server: 'example',
    about: 'the cached read against bare node:http and Express, plain and with gzip, br',
  },
];
const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet', 'arrow', 'xlsx'];

const USAGE = `Usage: npm run bench -- [options]   (or: node bench/run.js [options], after npx nest build)

Options:
  --only <phases>     comma-separated phases to run (default: all of them)
  --formats <list>    export formats of the exports phase (default: ${EXPORT_FORMATS.join(',')})
  --seconds <n>       seconds of each measurement in each round (default: BENCH_SECONDS or 5)
  --rounds <n>        rounds of each measurement (default: BENCH_ROUNDS or 3)
  --out <file>        where the results go (default: bench/results.md for a full run;
                      a run with --only or --formats writes no file unless given one)
  --nodes <list>      comma-separated Node binaries: the whole run once on each, one after the other,
                      and the results side by side (default: the Node running this)
  --from <json,...>   measure nothing: render the figures runs kept in bench/results.raw/ (several
                      files: side by side, as --nodes renders them)
  --help              this text

Phases:
${PHASES.map((phase) => `  ${phase.name.padEnd(10)} ${phase.about}`).join('\n')}

Environment: DATABASE_URL, REDIS_URL (Postgres and Redis, as the tests use them), ORDERS_ROWS (rows of
bench/project's orders table, default 1000000), BENCH_SECONDS, BENCH_ROUNDS.
Exits 0 when it measured, whatever the figures; 1 when it could not measure; 2 on a wrong option.`;

class UsageError extends Error {}

/**
 * @param {string | undefined} text
 * @param {string} name
 * @param {number} min
 * @param {number} max
 */
function positive(text, name, min, max) {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(
      `${name} must be a number from ${min} to ${max}, not ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/**
 * @param {string | undefined} text
 * @param {string[]} known
 * @param {string} what
 */
function list(text, known, what) {
  if (text === undefined) return undefined;
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !known.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `unknown ${what} ${JSON.stringify(unknown.join(',') || text)}; known: ${known.join(', ')}`,
    );
  }
  return names;
}

/**
 * The run's settings from its arguments and environment.
 * @param {string[]} argv the arguments after the script
 * @param {Record<string, string | undefined>} env
 */
function parseCli(argv, env) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        only: { type: 'string' },
        formats: { type: 'string' },
        seconds: { type: 'string' },
        rounds: { type: 'string' },
        out: { type: 'string' },
        from: { type: 'string' },
        nodes: { type: 'string' },
        raw: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const only = list(
    values.only,
    PHASES.map((phase) => phase.name),
    'phase',
  );
  const formats = list(values.formats, EXPORT_FORMATS, 'format');
  const partial = only !== undefined || formats !== undefined;
  return {
    help: values.help === true,
    phases: PHASES.map((phase) => phase.name).filter((name) => !only || only.includes(name)),
    formats: formats ?? EXPORT_FORMATS,
    seconds: positive(values.seconds ?? env.BENCH_SECONDS ?? '5', 'seconds', 1, 120),
    rounds: positive(values.rounds ?? env.BENCH_ROUNDS ?? '3', 'rounds', 1, 10),
    ordersRows: positive(env.ORDERS_ROWS ?? '1000000', 'ORDERS_ROWS', 1000, 100_000_000),
    out: values.out ?? (partial || values.from !== undefined ? undefined : 'bench/results.md'),
    from: values.from === undefined ? undefined : values.from.split(',').filter(Boolean),
    nodes: values.nodes === undefined ? undefined : values.nodes.split(',').filter(Boolean),
    // Where a run's figures are kept (a run of --nodes tells each of its runs).
    raw: values.raw,
    partial,
  };
}

module.exports = { parseCli, UsageError, USAGE, PHASES, EXPORT_FORMATS };
