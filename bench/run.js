// @ts-check
'use strict';
// `npm run bench`: Drey on Postgres and Redis, pinned to one core, each figure against a floor measured in
// the same run on that core (DuckDB itself, bare node:http, bare Express), the load pinned to the other
// core (see docs/performance.md; `--help` lists the options). Writes bench/results.md.
// Two Drey servers run one after the other: one serving the benchmark's project (bench/project, the
// generated orders) for the exports, single flight, uncached and tail phases, then one serving the example
// project for the PNG dashboard and the cached read.
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join, resolve } = require('node:path');
const { cachedPhase, EXAMPLE_P } = require('./lib/cached');
const { parseCli, UsageError, USAGE, PHASES } = require('./lib/cli');
const { dashboardPhase } = require('./lib/dashboard');
const { startDrey } = require('./lib/drey');
const { exportsPhase, tailPhase, P } = require('./lib/exports');
const { loadAverage, machine, renderResults, renderRuns } = require('./lib/report');
const { singleFlight, uncached } = require('./lib/uncached');

const ROOT = join(__dirname, '..');
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const CONNECTIONS = 10;
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
  const run = spawnSync(
    'taskset',
    ['-c', String(LOAD_CPU), process.execPath, __filename, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } },
  );
  process.exit(run.status ?? 1);
}

/**
 * Runs a phase and keeps its figures; a phase that cannot measure (Chromium missing, a server error) is
 * reported as such and the run goes on with the others, then exits 1.
 * @param {Record<string, any>} results
 * @param {string} phase
 * @param {() => Promise<unknown>} measure
 */
async function attempt(results, phase, measure) {
  try {
    results[phase] = await measure();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`${phase}: not measured: ${error instanceof Error ? error.stack : message}`);
    results.unmeasured = [...(results.unmeasured ?? []), { phase, message }];
  }
}

/**
 * @param {ReturnType<typeof parseCli>} options
 * @param {{ name: string, work: string, secret: string, password: string }} run
 * @param {Record<string, any>} results
 */
async function onOrders(options, run, results) {
  const drey = await startDrey({
    root: ROOT,
    work: run.work,
    name: run.name,
    projectDir: BENCH_PROJECT,
    P,
    log: 'drey.log',
    secret: run.secret,
    password: run.password,
    cpu: SERVER_CPU,
    env: { ORDERS_ROWS: String(options.ordersRows) },
  });
  results.ordersStartSeconds = drey.startSeconds;
  console.log(`Drey ready on bench/project in ${drey.startSeconds.toFixed(1)} s (build included)`);
  try {
    const context = contextOf(options, run, drey, BENCH_PROJECT);
    const wanted = (/** @type {string} */ phase) => options.phases.includes(phase);
    // The exports come first, on the server that has just built: after the load phases, its resident
    // memory also holds the garbage of thousands of requests that V8 has not collected yet.
    if (wanted('exports'))
      await attempt(results, 'exports', () => exportsPhase(context, options.formats));
    if (wanted('flight')) await attempt(results, 'flight', () => singleFlight(context));
    if (wanted('uncached')) await attempt(results, 'uncached', () => uncached(context));
    // CSV: the format every build of Drey since issue 14 serves, so the tail is measured either way.
    if (wanted('tail')) await attempt(results, 'tail', () => tailPhase(context, 'csv'));
  } finally {
    await drey.stop();
  }
}

/**
 * @param {ReturnType<typeof parseCli>} options
 * @param {{ name: string, work: string, secret: string, password: string }} run
 * @param {Record<string, any>} results
 */
async function onExample(options, run, results) {
  const drey = await startDrey({
    root: ROOT,
    work: run.work,
    name: `${run.name}_example`,
    projectDir: EXAMPLE_PROJECT,
    P: EXAMPLE_P,
    log: 'drey-example.log',
    secret: run.secret,
    password: run.password,
    cpu: SERVER_CPU,
  });
  results.exampleStartSeconds = drey.startSeconds;
  results.startup = { seconds: drey.startSeconds, steps: startupSteps(drey.logFile) };
  console.log(`Drey ready on examples/expenses in ${drey.startSeconds.toFixed(1)} s`);
  try {
    const context = contextOf(options, run, drey, EXAMPLE_PROJECT);
    // The dashboard first: its figures are read from the request log, which the cached phase grows.
    if (options.phases.includes('dashboard')) {
      await attempt(results, 'dashboard', () => dashboardPhase(context));
    }
    if (options.phases.includes('cached'))
      await attempt(results, 'cached', () => cachedPhase(context));
  } finally {
    await drey.stop();
  }
}

/**
 * Where a start's time went: the server's `start-up: ...` lines (src/runtime/startup-step.ts), each with
 * the milliseconds since its process started, then `listening`.
 * @param {string} logFile
 * @returns {{ step: string, atMs: number }[]}
 */
function startupSteps(logFile) {
  /** @type {{ step: string, atMs: number }[]} */
  const steps = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry.msg === 'string' && entry.msg.startsWith('start-up: ')) {
      steps.push({ step: entry.msg.slice('start-up: '.length), atMs: Number(entry.elapsedMs) });
    }
  }
  return steps;
}

/**
 * @param {ReturnType<typeof parseCli>} options
 * @param {{ work: string, secret: string }} run
 * @param {import('./lib/drey').Drey} drey
 * @param {string} projectDir
 * @returns {import('./lib/load').Context}
 */
function contextOf(options, run, drey, projectDir) {
  return {
    url: drey.url,
    pid: drey.server.pid,
    token: drey.token,
    dataDir: drey.dataDir,
    logFile: drey.logFile,
    projectDir,
    work: run.work,
    secret: run.secret,
    seconds: options.seconds,
    warmupSeconds: 1,
    connections: CONNECTIONS,
    rounds: options.rounds,
    serverCpu: SERVER_CPU,
    loadCpu: LOAD_CPU,
  };
}

async function main() {
  let options;
  try {
    options = parseCli(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (options.from) {
    // The figures of earlier runs, kept before rendering: rendering again costs no measurement.
    await render(
      options.from.map((file) => JSON.parse(readFileSync(resolve(ROOT, file), 'utf8'))),
      options.out,
    );
    return;
  }
  if (options.nodes) {
    await onEachNode(options.nodes, options.out);
    return;
  }
  if (pinSelf()) return;
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('build first: npx nest build');
  const started = performance.now();
  const loadBefore = loadAverage();
  const run = {
    name: `drey_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`,
    work: mkdtempSync(join(tmpdir(), 'drey-bench-')),
    secret: randomBytes(32).toString('hex'),
    password: randomBytes(12).toString('hex'),
  };
  /** @type {Record<string, any>} */
  const results = {};
  try {
    const servers = new Set(
      PHASES.filter((phase) => options.phases.includes(phase.name)).map((phase) => phase.server),
    );
    if (servers.has('orders')) await onOrders(options, run, results);
    if (servers.has('example')) await onExample(options, run, results);
  } finally {
    rmSync(run.work, { recursive: true, force: true });
  }
  const figures = {
    ...results,
    phases: options.phases,
    partial: options.partial,
    seconds: options.seconds,
    rounds: options.rounds,
    ordersRows: options.ordersRows,
    connections: CONNECTIONS,
    serverCpu: SERVER_CPU,
    loadCpu: LOAD_CPU,
    machine: machine(),
    loadBefore,
    loadAfter: loadAverage(),
    minutes: (performance.now() - started) / 60_000,
    finishedAt: new Date().toISOString(),
  };
  // Kept before rendering (bench/results.raw/ is ignored by git), so that `--from` renders them again.
  const raw = options.raw
    ? resolve(options.raw)
    : join(ROOT, 'bench', 'results.raw', `${figures.finishedAt.replaceAll(':', '-')}.json`);
  mkdirSync(dirname(raw), { recursive: true });
  writeFileSync(raw, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`figures kept in ${raw}`);
  await render([figures], options.out);
  if (results.unmeasured) process.exitCode = 1;
}

/**
 * `--nodes`: the whole run (the other options as given) once on each Node binary, one after the other,
 * each a process of that binary, so that Drey, its floors and the load all run on it; then their figures
 * side by side in `out`. A run that could not measure is left out and makes the exit 1.
 * @param {string[]} nodes
 * @param {string | undefined} out
 */
async function onEachNode(nodes, out) {
  const args = process.argv.slice(2).filter((arg, at, all) => {
    const option = arg.split('=')[0];
    return (
      option !== '--nodes' &&
      all[at - 1] !== '--nodes' &&
      option !== '--out' &&
      all[at - 1] !== '--out'
    );
  });
  const work = mkdtempSync(join(tmpdir(), 'drey-bench-nodes-'));
  const runs = [];
  try {
    for (const [index, node] of nodes.entries()) {
      const raw = join(ROOT, 'bench', 'results.raw', `nodes-${Date.now()}-${index}.json`);
      console.log(`\n== ${node}`);
      const run = spawnSync(
        node,
        [__filename, ...args, '--raw', raw, '--out', join(work, `${index}.md`)],
        { stdio: 'inherit', env: process.env },
      );
      if (run.error || !existsSync(raw)) {
        console.error(`${node}: no figures (${run.error?.message ?? `exit ${run.status}`})`);
        process.exitCode = 1;
        continue;
      }
      if (run.status !== 0) process.exitCode = 1;
      runs.push(JSON.parse(readFileSync(raw, 'utf8')));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (runs.length > 0) await render(runs, out);
}

/**
 * Prints the results of one run or more (side by side) and writes them to `out`, formatted as the
 * repository's Markdown is, so that the file passes the formatting check.
 * @param {Record<string, any>[]} runs
 * @param {string | undefined} out
 */
async function render(runs, out) {
  const text = runs.length === 1 ? renderResults(runs[0]) : renderRuns(runs);
  const prettier = require('prettier');
  const file = out ? resolve(ROOT, out) : join(ROOT, 'bench', 'results.md');
  const formatted = await prettier.format(text, {
    ...(await prettier.resolveConfig(file)),
    parser: 'markdown',
  });
  if (out) writeFileSync(file, formatted);
  console.log(`\n${formatted}`);
  if (out) console.log(`written to ${out}`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
