import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { CliOutput } from '@/cli/cli-output';

// The SDK serves stdio from a subpath export (`/stdio`), which this build's module resolution (node10)
// does not read: the type comes from the file, the module from Node's resolution of the export.
export type Stdio = typeof import('@modelcontextprotocol/server/dist/stdio.mjs');
type Client = typeof import('@modelcontextprotocol/client');

/** A server on this data folder's embedded database, as its lock names it (embedded-lock.ts). */
export interface RunningServer {
  pid: number;
  /** Its loopback origin, `http://127.0.0.1:4465`. */
  origin: string;
  /** The served project's prefix, P. */
  prefix: string;
}

/** JSON-RPC's "internal error": the relay could not deliver a request, or the server refused it. */
const RELAY_ERROR = -32603;

/**
 * `drey mcp` beside a running server on the embedded database: the assistant's stdio relayed, message by
 * message, to that server's MCP endpoint (`<origin>/mcp`), signed in with DREY_TOKEN as a bearer token.
 * PGlite has one writer, so this process cannot open the database as it does beside a server on Postgres;
 * through the endpoint, every call passes the HTTP door itself (the token checked at each call, the rate
 * limits, the audit). Both revisions pass as they are: a 2026-era request carries its version in its own
 * envelope, which the SDK's HTTP transport turns into headers; a 2025-era connection's version, answered to
 * `initialize`, is set on the transport for the calls after it. The relay is ours: the SDK has stdio and HTTP
 * transports but nothing that joins a server transport to a client one. Resolves when stdin closes.
 */
export async function relayMcp(
  server: RunningServer,
  token: string,
  output: CliOutput,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<void> {
  const { origin } = server;
  const username = await signedIn(server, token);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { StdioServerTransport } = require('@modelcontextprotocol/server/stdio') as Stdio;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/client') as Client;
  const endpoint = new URL('/mcp', origin);
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  /** Ids of `initialize` requests in flight: their answer names the 2025-era version for the transport. */
  const initializing = new Set<string | number>();

  remote.onmessage = (message) => {
    if ('id' in message && message.id !== undefined && initializing.delete(message.id)) {
      const version = (message as { result?: { protocolVersion?: unknown } }).result
        ?.protocolVersion;
      if (typeof version === 'string') remote.setProtocolVersion(version);
    }
    void local.send(message).catch(() => undefined);
  };
  remote.onerror = (error) => output.err(`drey mcp: ${endpoint.href}: ${error.message}`);
  local.onmessage = (message: JSONRPCMessage) => {
    const request = 'method' in message && 'id' in message ? message : undefined;
    const id = request?.id;
    if (request?.method === 'initialize') initializing.add(request.id);
    remote.send(message).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      output.err(`drey mcp: ${endpoint.href} refused or could not be reached: ${reason}`);
      if (id === undefined) return;
      initializing.delete(id);
      void local
        .send({
          jsonrpc: '2.0',
          id,
          error: { code: RELAY_ERROR, message: `the Drey server at ${origin}: ${reason}` },
        })
        .catch(() => undefined);
    });
  };
  const ended = new Promise<void>((resolve) => input.once('close', resolve));
  await remote.start();
  await local.start();
  output.err(
    `drey mcp: serving ${username} over stdio, through the running server (pid ${server.pid}, ${endpoint.href})`,
  );
  await ended;
  await local.close();
  await remote.close();
}

/**
 * The token's user, by `GET P/me` at the server: a token it refuses stops the command at its start, as
 * `drey mcp` does on its own database, rather than at the assistant's first call.
 */
async function signedIn(server: RunningServer, token: string): Promise<string> {
  const url = `${server.origin}${server.prefix}/me`;
  let reply: Response;
  try {
    reply = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new Error(
      `the running server (pid ${server.pid}) could not be reached at ${server.origin} ` +
        `(${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
  const body = (await reply.json().catch(() => ({}))) as { username?: unknown; message?: unknown };
  if (reply.status === 401 || reply.status === 403) {
    const why = typeof body.message === 'string' ? body.message : `HTTP ${reply.status}`;
    throw new Error(`DREY_TOKEN was refused (${why})`);
  }
  if (!reply.ok) {
    throw new Error(`the running server (pid ${server.pid}) answered ${reply.status} at ${url}`);
  }
  return typeof body.username === 'string' ? body.username : 'anonymous';
}
