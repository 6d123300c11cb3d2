// @ts-check
'use strict';
// The cached read against its floors: bare node:http and bare Express 5 serving Drey's own bytes for the
// same request after the same HS256 check (and, for reference, a bare Nest 12 app), plain and compressed,
// all in alternating rounds on the server's core.
const http = require('node:http');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { brotliCompressSync, constants } = require('node:zlib');
const { measure } = require('./load');
const { startPinned, waitForLine } = require('./processes');
const { inRounds, median, medianRatio } = require('./rounds');

/** The example project (examples/expenses), which the cached read and the dashboard phase read. */
const EXAMPLE_P = '/api/service-v0/project/expenses/v1';
/** The cached request: 100 expense rows of the example, as in the issue, behind a token. */
const CACHED_PATH = `${EXAMPLE_P}/datasets/expense_transactions/results?x_limit=100`;
const COMPRESSED = 'gzip, br';

/**
 * One GET of the cached path with exactly these headers (node:http adds no Accept-Encoding of its own, and
 * does not inflate): the bytes as they came and their Content-Encoding.
 * @param {string} url
 * @param {Record<string, string>} headers
 * @returns {Promise<{ status: number, body: Buffer, encoding: string | undefined }>}
 */
function getRaw(url, headers) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (response) => {
        /** @type {Buffer[]} */
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.once('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks),
            encoding: /** @type {string | undefined} */ (response.headers['content-encoding']),
          }),
        );
        response.once('error', reject);
      })
      .once('error', reject);
  });
}

/**
 * @param {import('./load').Context} context
 * @param {string} script
 * @param {string[]} args
 */
async function startFloor(context, script, args) {
  const log = join(context.work, `${script}.log`);
  const child = startPinned(
    context.serverCpu,
    [join(__dirname, '..', script), ...args],
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
    return { url, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/**
 * Drey's bytes for the cached read, plain and as it answers `Accept-Encoding: gzip, br`; the floors then
 * serve the same bytes the same way. If Drey does not compress, the floors serve the body compressed with
 * brotli (what a server that keeps bodies compressed would send), and the report says Drey sent it plain.
 * @param {import('./load').Context} context
 */
async function cachedBodies(context) {
  const headers = { authorization: `Bearer ${context.token}` };
  const plain = await getRaw(context.url + CACHED_PATH, headers);
  if (plain.status !== 200) throw new Error(`the cached read answered ${plain.status}`);
  const compressed = await getRaw(context.url + CACHED_PATH, {
    ...headers,
    'accept-encoding': COMPRESSED,
  });
  const dreyEncoding = compressed.encoding;
  const encoding = dreyEncoding ?? 'br';
  const body = dreyEncoding
    ? compressed.body
    : brotliCompressSync(plain.body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 5 },
      });
  return { plain: plain.body, compressed: body, encoding, dreyEncoding };
}

/**
 * Rounds of every contender on the cached read: node:http, Express, Nest and Drey plain, then node:http,
 * Express and Drey with `Accept-Encoding: gzip, br`; the order reversed every other round. The floors run
 * for the whole phase (idle between their turns), each measured for `seconds` after a warm-up.
 * @param {import('./load').Context} context
 */
async function cachedPhase(context) {
  const bodies = await cachedBodies(context);
  const plainFile = join(context.work, 'cached-body.json');
  const compressedFile = join(context.work, `cached-body.json.${bodies.encoding}`);
  writeFileSync(plainFile, bodies.plain);
  writeFileSync(compressedFile, bodies.compressed);
  const floorArgs = [plainFile, compressedFile, bodies.encoding];
  const started = [];
  try {
    const httpFloor = await startFloor(context, 'floor-http.js', floorArgs);
    started.push(httpFloor);
    const expressFloor = await startFloor(context, 'floor-express.js', floorArgs);
    started.push(expressFloor);
    const nestFloor = await startFloor(context, 'floor-nest.js', [plainFile]);
    started.push(nestFloor);
    const auth = { authorization: `Bearer ${context.token}` };
    const zipped = { ...auth, 'accept-encoding': COMPRESSED };
    /** @type {[string, string, Record<string, string>][]} */
    const contenders = [
      ['http', httpFloor.url, auth],
      ['express', expressFloor.url, auth],
      ['nest', nestFloor.url, auth],
      ['drey', context.url, auth],
      ['httpCompressed', httpFloor.url, zipped],
      ['expressCompressed', expressFloor.url, zipped],
      ['dreyCompressed', context.url, zipped],
    ];
    const rounds = await inRounds({
      rounds: context.rounds,
      label: 'cached',
      floor: (/** @type {Record<string, any>} */ round) => round.http.rps,
      round: async (index) => {
        /** @type {Record<string, import('./load').LoadResult>} */
        const round = {};
        const order = index % 2 === 0 ? contenders : [...contenders].reverse();
        for (const [name, base, headers] of order) {
          round[name] = await measure(name, {
            url: base + CACHED_PATH,
            headers,
            connections: context.connections,
            seconds: context.seconds,
            warmupSeconds: context.warmupSeconds,
          });
        }
        console.log(
          `cached round ${index + 1}: ${order.map(([name]) => `${name} ${Math.round(round[name].rps)}`).join(', ')} req/s`,
        );
        return round;
      },
    });
    /** @type {Record<string, { rps: number, share: number, p50: number, p99: number, non2xx: number }>} */
    const figures = {};
    for (const [name] of contenders) {
      const runs = rounds.kept.map((round) => round[name]);
      // Each contender's requests/s as a share of node:http's in the same round (plain or compressed).
      const floor = name.endsWith('Compressed') ? 'httpCompressed' : 'http';
      figures[name] = {
        rps: median(runs.map((run) => run.rps)),
        share: medianRatio(
          rounds.kept,
          (round) => round[name].rps,
          (round) => round[floor].rps,
        ),
        p50: median(runs.map((run) => run.p50)),
        p99: median(runs.map((run) => run.p99)),
        non2xx: runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
      };
    }
    return {
      figures,
      plainBytes: bodies.plain.length,
      compressedBytes: bodies.compressed.length,
      encoding: bodies.encoding,
      dreyEncoding: bodies.dreyEncoding,
      redos: rounds.redos,
      spread: rounds.spread,
    };
  } finally {
    for (const floor of started) await floor.stop();
  }
}

module.exports = { cachedPhase, getRaw, EXAMPLE_P, CACHED_PATH };
