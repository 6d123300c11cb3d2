import { McpServer } from '@modelcontextprotocol/server';
import type { AuthInfo, JSONRPCRequest } from '@modelcontextprotocol/server';
import { ServerPool } from '@/mcp/server-pool';

const AUTH: AuthInfo = { token: '', clientId: 'test', scopes: [], extra: { who: 'someone' } };

/** A server with one tool answering the `authInfo` it was called with, counting how many were made. */
function maker() {
  const made: McpServer[] = [];
  const make = () => {
    const server = new McpServer({ name: 'test', version: '1' });
    server.registerTool('who', { description: 'who calls' }, (context) => ({
      content: [{ type: 'text', text: String(context.http?.authInfo?.extra?.who) }],
    }));
    made.push(server);
    return Promise.resolve(server);
  };
  return { made, make };
}

const call = (id: number): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'who', arguments: {} },
});

describe('ServerPool', () => {
  it("answers with the request's authInfo, and serves the next request of the view with the same server", async () => {
    const pool = new ServerPool<object>(4);
    const { made, make } = maker();
    const view = {};
    const first = await pool.exchange(view, make, call(1), AUTH);
    expect(first).toMatchObject({ id: 1, result: { content: [{ text: 'someone' }] } });
    const second = await pool.exchange(view, make, call(1), {
      ...AUTH,
      extra: { who: 'another' },
    });
    expect(second).toMatchObject({ id: 1, result: { content: [{ text: 'another' }] } });
    expect(made).toHaveLength(1);
    expect(pool.size).toBe(1);
    pool.clear();
  });

  it('makes a server per request in flight, and keeps at most maxIdle', async () => {
    const pool = new ServerPool<object>(2);
    const { made, make } = maker();
    const view = {};
    await Promise.all([1, 2, 3].map((id) => pool.exchange(view, make, call(id), AUTH)));
    expect(made).toHaveLength(3);
    expect(pool.size).toBe(2);
    pool.clear();
    expect(pool.size).toBe(0);
  });

  it('gives up a server of the view served longest ago when full', async () => {
    const pool = new ServerPool<object>(1);
    const { made, make } = maker();
    const [old, recent] = [{}, {}];
    await pool.exchange(old, make, call(1), AUTH);
    await pool.exchange(recent, make, call(1), AUTH);
    await pool.exchange(recent, make, call(2), AUTH);
    expect(made).toHaveLength(2);
    await pool.exchange(old, make, call(3), AUTH);
    expect(made).toHaveLength(3);
    expect(pool.size).toBe(1);
    pool.clear();
  });

  it("answers an unknown method with the SDK's error, and keeps the server", async () => {
    const pool = new ServerPool<object>(2);
    const { made, make } = maker();
    const view = {};
    const answer = await pool.exchange(view, make, { jsonrpc: '2.0', id: 7, method: 'nope' }, AUTH);
    expect(answer).toMatchObject({ id: 7, error: { code: -32601 } });
    await pool.exchange(view, make, call(8), AUTH);
    expect(made).toHaveLength(1);
    pool.clear();
  });
});
