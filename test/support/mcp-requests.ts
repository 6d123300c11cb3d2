// Requests written by hand, apart from mcp-clients.ts: the in-process specs use them too, and must not load
// the SDKs' clients that file brings.

/** A 2025-era `initialize` as a client writes it by hand (curl), and the media types such a request accepts. */
export const MCP_INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'curl', version: '1' },
  },
};
export const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };
