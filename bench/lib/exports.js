// @ts-check
'use strict';
// The export phase: each format of a 1,000,000-row orders_detail export, Drey against DuckDB writing the
// same rows itself, in alternating rounds; and the cached read's tail while such an export runs.
const http = require('node:http');
const { createWriteStream, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { pipeline } = require('node:stream/promises');
const { measure } = require('./load');
const { memoryOf, resetPeak, startPinned, waitForLine } = require('./processes');
const { inRounds, median, medianRatio } = require('./rounds');
const { EXPORT_SELECTION, queryString } = require('./selections');

/** The benchmark's project (bench/project). */
const P = '/api/service-v0/project/orders/v1';
/** Every row of orders_detail (see EXPORT_SELECTION), in the format that `x_format` names. */
const exportPath = (/** @type {string} */ format) =>
  `${P}/datasets/orders_detail/results?x_format=${format}&${queryString(EXPORT_SELECTION)}`;
/** The cached read of the tail measurement: 100 orders, asked for again and again. */
const TAIL_CACHED_PATH = `${P}/datasets/orders_detail/results?x_limit=100`;

/**
 * The formats by the built-in x_format, and the floor of each: DuckDB's own COPY writer where it has one;
 * for Arrow, which DuckDB cannot write here (its arrow extension cannot be installed), its own writer of a
 * columnar binary format, Parquet (DuckDB merely reading the rows chunk by chunk, with no format at all,
 * is in the floor script as `chunks`, for reference); for Excel, none: its bar is absolute (300,000
 * rows/s).
 * @type {{ format: string, floor: 'csv' | 'json' | 'parquet' | 'chunks' | null, floorName: string }[]}
 */
const FORMATS = [
  { format: 'csv', floor: 'csv', floorName: 'COPY (FORMAT csv)' },
  { format: 'ndjson', floor: 'json', floorName: 'COPY (FORMAT json)' },
  { format: 'parquet', floor: 'parquet', floorName: 'COPY (FORMAT parquet)' },
  { format: 'arrow', floor: 'parquet', floorName: 'COPY (FORMAT parquet): no Arrow writer here' },
  { format: 'xlsx', floor: null, floorName: '—' },
];

/**
 * @typedef {import('./load').Context} Context
 * @typedef {{ status: number, rows: number, bytes: number, seconds: number, rowsPerSecond: number,
 *   peakMb: number, beforeMb: number, message?: string, counted: string }} DreyExport
 */

/**
 * Whether Drey serves a format: the status of an export request, and the message of a refusal. A 200 is
 * cut off once its headers have come, so the check costs no export.
 * @param {Context} context
 * @param {string} format
 * @returns {Promise<{ status: number, message?: string }>}
 */
async function probe(context, format) {
  const response = await get(context, format);
  const status = /** @type {number} */ (response.statusCode);
  if (status === 200) {
    response.destroy();
    return { status };
  }
  return { status, message: await errorMessage(response) };
}

/** @param {Context} context @param {string} format @returns {Promise<http.IncomingMessage>} */
function get(context, format) {
  // node:http rather than fetch: no Accept-Encoding (fetch adds one and inflates what comes back), so the
  // bytes measured are the export's own, as DuckDB's floor writes them.
  return new Promise((resolve, reject) => {
    http
      .get(context.url + exportPath(format), {
        headers: { authorization: `Bearer ${context.token}` },
        agent: false,
      })
      .once('response', resolve)
      .once('error', reject);
  });
}

/** The `message` of an error body (or its first 300 characters). @param {http.IncomingMessage} response */
async function errorMessage(response) {
  const chunks = [];
  for await (const chunk of response) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8').slice(0, 300);
  try {
    return String(JSON.parse(text).message ?? text);
  } catch {
    return text;
  }
}

/**
 * One export from Drey, read as it arrives (nothing buffered in this process: text formats are counted
 * line by line, the others written to a file and counted afterwards), with the server's peak resident
 * memory (VmHWM, reset just before).
 * @param {Context} context
 * @param {string} format
 * @returns {Promise<DreyExport>}
 */
async function dreyExport(context, format) {
  const beforeMb = memoryOf(context.pid).rssMb;
  resetPeak(context.pid);
  const started = performance.now();
  const response = await get(context, format);
  const status = /** @type {number} */ (response.statusCode);
  if (status !== 200) {
    const message = await errorMessage(response);
    return {
      status,
      rows: NaN,
      bytes: NaN,
      seconds: NaN,
      rowsPerSecond: NaN,
      peakMb: NaN,
      beforeMb,
      message,
      counted: '',
    };
  }
  let bytes = 0;
  let rows = NaN;
  let counted = '';
  let seconds = NaN;
  if (format === 'csv' || format === 'ndjson') {
    let lines = 0;
    for await (const chunk of response) {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    }
    rows = format === 'csv' ? lines - 1 : lines;
    counted = 'lines';
    seconds = (performance.now() - started) / 1000;
  } else {
    const file = join(context.work, `export-${process.pid}.${format}`);
    response.on('data', (/** @type {Buffer} */ chunk) => (bytes += chunk.length));
    await pipeline(response, createWriteStream(file));
    seconds = (performance.now() - started) / 1000;
    try {
      ({ rows, counted } = await countRows(format, file));
    } finally {
      rmSync(file, { force: true });
    }
  }
  const { peakMb } = memoryOf(context.pid);
  return { status, rows, bytes, seconds, rowsPerSecond: rows / seconds, peakMb, beforeMb, counted };
}

/**
 * The rows of an exported file, read back after the timing: Parquet by DuckDB, Arrow by apache-arrow's
 * reader, Excel by the `<row` elements of its first sheet (less the header row), unzipped with yauzl.
 * apache-arrow and yauzl are taken from node_modules if there (the Arrow export depends on the first,
 * Chromium's download helper brings the second); without them the rows are left uncounted, not assumed.
 * @param {string} format
 * @param {string} file
 * @returns {Promise<{ rows: number, counted: string }>}
 */
async function countRows(format, file) {
  if (format === 'parquet') {
    const { DuckDBInstance } = require('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    try {
      const connection = await instance.connect();
      const reader = await connection.runAndReadAll(
        `SELECT count(*) FROM read_parquet('${file.replaceAll("'", "''")}')`,
      );
      connection.closeSync();
      return { rows: Number(reader.getRows()[0][0]), counted: 'read back by DuckDB' };
    } finally {
      instance.closeSync();
    }
  }
  if (format === 'arrow') {
    let arrow;
    try {
      arrow = require('apache-arrow');
    } catch {
      return { rows: NaN, counted: 'not counted: apache-arrow is not installed' };
    }
    let rows = 0;
    const { createReadStream } = require('node:fs');
    for await (const batch of await arrow.RecordBatchReader.from(createReadStream(file))) {
      rows += batch.numRows;
    }
    return { rows, counted: 'read back by apache-arrow' };
  }
  if (format === 'xlsx') {
    let yauzl;
    try {
      yauzl = require('yauzl');
    } catch {
      return { rows: NaN, counted: 'not counted: yauzl is not installed' };
    }
    const rows = await xlsxRows(yauzl, file);
    return { rows, counted: '<row> elements of the first sheet, less the header' };
  }
  return { rows: NaN, counted: 'not counted' };
}

/**
 * `<row` elements of the first worksheet, streamed out of the zip, less one for the header row.
 * @param {any} yauzl
 * @param {string} file
 * @returns {Promise<number>}
 */
function xlsxRows(yauzl, file) {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file,
      { lazyEntries: true },
      (/** @type {Error | null} */ error, /** @type {any} */ zip) => {
        if (error) return reject(error);
        let found = false;
        zip.on('entry', (/** @type {any} */ entry) => {
          if (!/^xl\/worksheets\/sheet1\.xml$/.test(entry.fileName)) return zip.readEntry();
          found = true;
          zip.openReadStream(
            entry,
            async (/** @type {Error | null} */ openError, /** @type {any} */ stream) => {
              if (openError) return reject(openError);
              let count = 0;
              let tail = '';
              try {
                for await (const chunk of stream) {
                  const text = tail + chunk.toString('latin1');
                  count += (text.match(/<row[\s>]/g) ?? []).length;
                  // An element cut between two chunks is counted in the next one, and only there.
                  const cut = text.lastIndexOf('<');
                  tail = cut >= text.length - 5 ? text.slice(cut) : '';
                  if (tail) count -= (tail.match(/<row[\s>]/g) ?? []).length;
                }
                zip.close();
                resolve(count - 1);
              } catch (streamError) {
                reject(streamError);
              }
            },
          );
        });
        zip.once('end', () =>
          found ? undefined : reject(new Error('no xl/worksheets/sheet1.xml')),
        );
        zip.readEntry();
      },
    );
  });
}

/**
 * DuckDB writing (or reading) the same rows itself, pinned to the server's core.
 * @param {Context} context
 * @param {string} floor
 * @returns {Promise<{ rows: number, seconds: number, bytes: number, peakMb: number, rowsPerSecond: number }>}
 */
async function floorExport(context, floor) {
  const log = join(context.work, `floor-export-${floor}.log`);
  const child = startPinned(
    context.serverCpu,
    [
      join(__dirname, '..', 'floor-duckdb-export.js'),
      environmentFile(context.dataDir),
      context.projectDir,
      floor,
      context.work,
    ],
    {},
    log,
  );
  const code = await child.exited;
  const text = readFileSync(log, 'utf8');
  if (code !== 0) throw new Error(`DuckDB's ${floor} floor failed: ${text}`);
  const result = JSON.parse(text.trim().split('\n').pop() ?? '{}');
  return { ...result, rowsPerSecond: result.rows / result.seconds };
}

/** The environment file Drey serves now: the pointer's first line is the build's id. @param {string} dataDir */
function environmentFile(dataDir) {
  const current = readFileSync(join(dataDir, 'environments', 'current'), 'utf8')
    .split('\n')[0]
    .trim();
  return join(dataDir, 'environments', `${current}.duckdb`);
}

/**
 * Every format in turn: one request first to see whether Drey serves it (a 406 is "not served", not a
 * failure), then rounds of Drey and its floor, which goes first changing every round.
 * @param {Context} context
 * @param {string[]} [only] formats to measure (all by default)
 */
async function exportsPhase(context, only) {
  const results = [];
  for (const spec of FORMATS.filter((candidate) => !only || only.includes(candidate.format))) {
    const first = await probe(context, spec.format);
    if (first.status === 406) {
      console.log(`export ${spec.format}: not served (406)`);
      results.push({ ...spec, served: false, message: first.message });
      continue;
    }
    if (first.status !== 200) {
      console.log(`export ${spec.format}: answered ${first.status}`);
      results.push({ ...spec, served: false, failed: first.status, message: first.message });
      continue;
    }
    const rounds = await inRounds({
      rounds: context.rounds,
      label: `export ${spec.format}`,
      floor: (/** @type {any} */ round) => round.floor?.rowsPerSecond ?? NaN,
      round: async (index) => {
        /** @type {{ drey?: DreyExport, floor?: Awaited<ReturnType<typeof floorExport>> }} */
        const round = {};
        const sides = [
          async () => (round.drey = await dreyExport(context, spec.format)),
          async () => {
            if (spec.floor) round.floor = await floorExport(context, spec.floor);
          },
        ];
        if (index % 2 === 1) sides.reverse();
        for (const side of sides) await side();
        return round;
      },
    });
    const drey = rounds.kept.map((round) => /** @type {DreyExport} */ (round.drey));
    const floors = rounds.kept.flatMap((round) => (round.floor ? [round.floor] : []));
    const result = {
      ...spec,
      served: true,
      rows: median(drey.map((run) => run.rows)),
      counted: drey[0].counted,
      megabytes: median(drey.map((run) => run.bytes)) / 1024 ** 2,
      rowsPerSecond: median(drey.map((run) => run.rowsPerSecond)),
      seconds: median(drey.map((run) => run.seconds)),
      peakMb: Math.max(...drey.map((run) => run.peakMb)),
      beforeMb: median(drey.map((run) => run.beforeMb)),
      failedRounds: drey.filter((run) => run.status !== 200).length,
      floorRows: median(floors.map((run) => run.rows)),
      floorRowsPerSecond: median(floors.map((run) => run.rowsPerSecond)),
      floorPeakMb: median(floors.map((run) => run.peakMb)),
      redos: rounds.redos,
      spread: rounds.spread,
    };
    console.log(
      `export ${spec.format}: ${Math.round(result.rowsPerSecond)} rows/s` +
        (spec.floor ? `, floor ${Math.round(result.floorRowsPerSecond)} rows/s` : '') +
        `, peak ${Math.round(result.peakMb)} MB`,
    );
    const ratio = spec.floor
      ? medianRatio(
          rounds.kept,
          (round) => round.drey?.rowsPerSecond ?? NaN,
          (round) => round.floor?.rowsPerSecond ?? NaN,
        )
      : NaN;
    results.push({ ...result, ratio });
  }
  return results;
}

/**
 * The cached read's tail while 1,000,000-row exports run one after another on a second client: rounds of
 * the same read without an export and with one, alternating. The second client (bench/export-loop.js) is
 * a process of its own on the load's core, so reading the export costs autocannon's event loop nothing.
 * @param {Context} context
 * @param {string} format a format Drey serves
 */
async function tailPhase(context, format) {
  const options = {
    url: context.url + TAIL_CACHED_PATH,
    headers: { authorization: `Bearer ${context.token}` },
    connections: context.connections,
    seconds: context.seconds,
    warmupSeconds: 1,
  };
  const quiet = () => measure('cached read, no export', options);
  const loaded = async () => {
    const log = join(context.work, 'export-loop.log');
    const child = startPinned(
      context.loadCpu,
      [join(__dirname, '..', 'export-loop.js'), context.url + exportPath(format)],
      { BENCH_TOKEN: context.token },
      log,
    );
    try {
      await waitForLine(
        log,
        (line) => (line.startsWith('exporting') ? true : undefined),
        child,
        30_000,
      );
      const result = await measure('cached read during an export', {
        ...options,
        warmupSeconds: 0,
      });
      return result;
    } finally {
      await child.stop();
      // Exports the server failed (not the one cut short at the end) are worth knowing of.
      const done = /^done (\d+) (\d+)/m.exec(readFileSync(log, 'utf8'));
      if (done && done[2] !== '0') console.log(`tail: ${done[2]} exports failed during the round`);
    }
  };
  const rounds = await inRounds({
    rounds: context.rounds,
    label: 'tail',
    floor: (/** @type {any} */ round) => round.quiet.rps,
    round: async (index) => {
      const round = /** @type {{ quiet: any, loaded: any }} */ ({});
      const sides = [
        async () => (round.quiet = await quiet()),
        async () => (round.loaded = await loaded()),
      ];
      if (index % 2 === 1) sides.reverse();
      for (const side of sides) await side();
      return round;
    },
  });
  const pick = (/** @type {'quiet' | 'loaded'} */ side, /** @type {string} */ field) =>
    median(rounds.kept.map((round) => round[side][field]));
  return {
    format,
    quiet: { rps: pick('quiet', 'rps'), p50: pick('quiet', 'p50'), p99: pick('quiet', 'p99') },
    loaded: { rps: pick('loaded', 'rps'), p50: pick('loaded', 'p50'), p99: pick('loaded', 'p99') },
    p99Ratio: medianRatio(
      rounds.kept,
      (round) => round.loaded.p99,
      (round) => round.quiet.p99,
    ),
    non2xx: rounds.kept.reduce((sum, round) => sum + round.quiet.non2xx + round.loaded.non2xx, 0),
    redos: rounds.redos,
    spread: rounds.spread,
  };
}

module.exports = {
  countRows,
  exportsPhase,
  tailPhase,
  environmentFile,
  FORMATS,
  P,
  exportPath,
  TAIL_CACHED_PATH,
};
