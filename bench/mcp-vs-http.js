// @ts-check
'use strict';
// A cached read as an assistant makes it (POST P/mcp, tools/call dataset_rows, 2025-11-25 JSON-RPC) against
// the same rows read over HTTP: the GET (a fast route) and the POST with a JSON body (Nest's whole
// pipeline, as the MCP request takes it). Throughput ratios in alternating rounds. Run the server on one
// core and this on the other:
//   taskset -c 0 node dist/main.js &        (the example project, with DATABASE_URL and REDIS_URL)
//   taskset -c 1 node bench/mcp-vs-http.js http://127.0.0.1:4465 "$ADMIN_PASSWORD" [seconds] [rounds]
const { measure } = require('./lib/load');

const P = '/api/service-v0/project/expenses/v1';

async function main() {
  const [base = 'http://127.0.0.1:4465', password = '', seconds = '5', rounds = '3'] =
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
  for (let round = 0; round < Number(rounds); round++) {
    const overGet = await measure('get', { ...settings, ...get });
    const overPost = await measure('post', { ...settings, ...post });
    const overMcp = await measure('mcp', { ...settings, ...mcp });
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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
