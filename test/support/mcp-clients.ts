import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export { MCP_ACCEPT, MCP_INITIALIZE } from './mcp-requests';

/** What the specs ask of an MCP client, whichever SDK and protocol revision it speaks. */
export interface McpTestClient {
  kind: ClientKind;
  /** The protocol revision the connection speaks. */
  protocol: string | undefined;
  listTools(): Promise<{ tools: ToolInfo[] }>;
  callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  listResources(): Promise<{ resources: { uri: string; name: string }[] }>;
  readResource(uri: string): Promise<{ contents: { uri: string; text?: string }[] }>;
  close(): Promise<void>;
}

export interface ToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown> & { properties?: Record<string, Record<string, unknown>> };
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface ToolResult {
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * `v2-modern`: the v2 SDK negotiating (it picks 2026-07-28 when the server offers it); `v2-legacy`: the
 * v2 SDK's default 2025 handshake; `v1`: the v1 SDK (2025 only).
 */
export type ClientKind = 'v2-modern' | 'v2-legacy' | 'v1';
export const CLIENT_KINDS: ClientKind[] = ['v2-modern', 'v2-legacy', 'v1'];

export async function connectMcp(
  kind: ClientKind,
  url: string,
  token?: string,
  extraHeaders: Record<string, string> = {},
): Promise<McpTestClient> {
  const headers: Record<string, string> = {
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
    ...extraHeaders,
  };
  const endpoint = new URL(url);
  if (kind === 'v1') {
    const client = new ClientV1({ name: 'drey-test-v1', version: '1.0.0' });
    await client.connect(new HttpTransportV1(endpoint, { requestInit: { headers } }));
    return face(kind, client, (client.transport as HttpTransportV1 | undefined)?.protocolVersion);
  }
  const client = new ClientV2(
    { name: 'drey-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: kind === 'v2-modern' ? 'auto' : 'legacy' } },
  );
  await client.connect(new HttpTransportV2(endpoint, { requestInit: { headers } }));
  return v2Face(kind, client);
}

/**
 * A client of `drey mcp` over stdio, started as a desktop assistant starts it: `command args`, with
 * exactly `env`. Its standard error is kept in `stderr`.
 */
export async function connectStdio(
  kind: ClientKind,
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<McpTestClient & { stderr: string[] }> {
  const stderr: string[] = [];
  const params = { command, args, env, cwd, stderr: 'pipe' as const };
  if (kind === 'v1') {
    const client = new ClientV1({ name: 'drey-test-v1', version: '1.0.0' });
    const transport = new StdioTransportV1(params);
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    await client.connect(transport);
    return {
      ...face(kind, client, client.getServerVersion() ? '2025-11-25' : undefined),
      stderr,
    };
  }
  const client = new ClientV2(
    { name: 'drey-test-v2', version: '1.0.0' },
    // `{ pin }` rather than `auto`: over stdio, auto probes in a second process started for the probe.
    { versionNegotiation: { mode: kind === 'v2-modern' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  const transport = new StdioTransportV2(params);
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  await client.connect(transport);
  return { ...v2Face(kind, client), stderr };
}

/** What the tests call on a client, the same in both SDK versions. */
interface SdkClient {
  listTools(): Promise<unknown>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listResources(): Promise<unknown>;
  readResource(request: { uri: string }): Promise<unknown>;
  close(): Promise<void>;
}

/** A client of either SDK version behind the tests' face; `protocol` as its connection tells it. */
function face(kind: ClientKind, client: SdkClient, protocol: string | undefined): McpTestClient {
  return {
    kind,
    protocol,
    listTools: () => client.listTools() as Promise<{ tools: ToolInfo[] }>,
    callTool: (name, args = {}) =>
      client.callTool({ name, arguments: args }) as Promise<ToolResult>,
    listResources: () => client.listResources() as ReturnType<McpTestClient['listResources']>,
    readResource: (uri) =>
      client.readResource({ uri }) as ReturnType<McpTestClient['readResource']>,
    close: () => client.close(),
  };
}

export function v2Face(kind: ClientKind, client: ClientV2): McpTestClient {
  return face(kind, client, client.getNegotiatedProtocolVersion());
}

/** The HTTP error body a refused tool call carries. */
export function errorBody(result: ToolResult): Record<string, unknown> {
  expect(result.isError).toBe(true);
  return JSON.parse(result.content[0].text ?? '') as Record<string, unknown>;
}
