// @ts-check
'use strict';
// A cached read as an assistant makes it (POST P/mcp, tools/call dataset_rows, 2025-11-25 JSON-RPC) against
// the same rows read over HTTP: the GET (a fast route) and the POST with a JSON body (Nest's whole
// pipeline, as the MCP request takes it). Throughput ratios in alternating rounds. Run the server on one
// core and this on the other:
//   taskset -c 0 node dist/main.js &        (the example project, with DATABASE_URL and REDIS_URL)
//   taskset -c 1 node bench/mcp-vs-http.js http://127.0.0.1:4465 "$ADMIN_PASSWORD" [seconds] [rounds] [server-pid]
// Given the server's pid, each measurement also reports the server's CPU time per request (utime+stime
// from /proc over the measured seconds, after a warm-up of its own): steadier than throughput on a shared
// machine.
const { measure } = require('./lib/load');
const { cpuSecondsOf } = require('./lib/processes');

const P = '/api/service-v0/project/expenses/v1';

async function main() {
  const [base = 'http://127.0.0.1:4465', password = '', seconds = '5', rounds = '3', pid = ''] =
    process.argv.slice(2);
  const login = await fetch(`${base}${P}/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password }),
  });
  const { access_token: token } = /** @type {{ access_token: string }} */ (await login.json());
  const auth = { Authorization: `Bearer ${token}` };
  const POST = /** @type {'POST'} */ ('POST');
  const mcp = {
    url: `${base}${P}/mcp`,
    method: POST,
    headers: {
      ...auth,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'dataset_rows', arguments: { dataset: 'expense_transactions', limit: 10 } },
    }),
  };
  const get = {
    url: `${base}${P}/datasets/expense_transactions/results?x_limit=10&x_orientation=rows`,
    headers: auth,
  };
  const post = {
    url: `${base}${P}/datasets/expense_transactions/results`,
    method: POST,
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ x_limit: 10, x_orientation: 'rows' }),
  };
  // The bytes each answer costs, once.
  const mcpBytes = (await (await fetch(mcp.url, mcp)).arrayBuffer()).byteLength;
  const getBytes = (await (await fetch(get.url, get)).arrayBuffer()).byteLength;
  const settings = { connections: 10, seconds: Number(seconds), warmupSeconds: 1 };
  /** @type {{ get: number[], post: number[] }} */
  const ratios = { get: [], post: [] };
  /** @type {{ get: number[], post: number[], mcp: number[] }} */
  const micros = { get: [], post: [], mcp: [] };
  /**
   * One measurement, with the server's CPU per request when its pid is known.
   * @param {'get' | 'post' | 'mcp'} name
   * @param {Parameters<typeof measure>[1]} options
   */
  const timed = async (name, options) => {
    if (!pid) return measure(name, options);
    await measure(name, { ...options, seconds: options.warmupSeconds, warmupSeconds: 0 });
    const before = cpuSecondsOf(`/proc/${pid}/stat`);
    const result = await measure(name, { ...options, warmupSeconds: 0 });
    micros[name].push(((cpuSecondsOf(`/proc/${pid}/stat`) - before) / result.requests) * 1e6);
    return result;
  };
  for (let round = 0; round < Number(rounds); round++) {
    const overGet = await timed('get', { ...settings, ...get });
    const overPost = await timed('post', { ...settings, ...post });
    const overMcp = await timed('mcp', { ...settings, ...mcp });
    ratios.get.push(overMcp.rps / overGet.rps);
    ratios.post.push(overMcp.rps / overPost.rps);
    const failed = [overGet, overPost, overMcp].reduce((sum, r) => sum + r.errors + r.non2xx, 0);
    console.log(
      `round ${round + 1}: GET ${overGet.rps.toFixed(0)} req/s, POST ${overPost.rps.toFixed(0)} req/s, ` +
        `MCP ${overMcp.rps.toFixed(0)} req/s (p50 ${overGet.p50.toFixed(1)} / ${overPost.p50.toFixed(1)} / ` +
        `${overMcp.p50.toFixed(1)} ms), failed ${failed}`,
    );
  }
  const median = (/** @type {number[]} */ list) =>
    [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)].toFixed(3);
  console.log(`bytes of one answer: MCP ${mcpBytes}, GET ${getBytes}`);
  console.log(
    `MCP/GET throughput, median: ${median(ratios.get)}; MCP/POST: ${median(ratios.post)}`,
  );
  if (pid) {
    const us = (/** @type {number[]} */ list) => Math.round(Number(median(list)));
    console.log(
      `server CPU per request, median: GET ${us(micros.get)} µs, POST ${us(micros.post)} µs, ` +
        `MCP ${us(micros.mcp)} µs (MCP/POST ${(Number(median(micros.mcp)) / Number(median(micros.post))).toFixed(2)})`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
