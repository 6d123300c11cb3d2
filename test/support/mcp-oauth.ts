import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
  UnauthorizedError as UnauthorizedV2,
} from '@modelcontextprotocol/client';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { P } from './api';
import { signInThrough } from './oauth-flow';

/** Where the test client says it receives the authorization response (nothing listens: it is read; a port Chromium will open). */
export const CLIENT_REDIRECT = 'http://127.0.0.1:47823/mcp-client/callback';

/** The assistant's own page on loopback: `callback` is its redirect URI. */
export interface AssistantCallback {
  callback: string;
  close(): void;
}

/**
 * Listens on loopback as a desktop assistant does for the authorization response: the page the browser is
 * sent back to after sign-in.
 */
export async function listenAsAssistant(): Promise<AssistantCallback> {
  const assistant = createServer((_request, response) => response.end('back at the assistant'));
  await new Promise<void>((resolve) => assistant.listen(0, '127.0.0.1', resolve));
  return {
    callback: `http://127.0.0.1:${(assistant.address() as AddressInfo).port}/callback`,
    close: () => assistant.close(),
  };
}

/**
 * An OAuth client provider as an assistant keeps one, in memory: the SDKs' `OAuthClientProvider` (the same
 * shape in v1 and v2). With `clientMetadataUrl`, the client is identified by its metadata document (CIMD);
 * without, the SDK registers it (DCR). The authorization URL the SDK would open in a browser is kept in
 * `authorizationUrl`.
 */
export class MemoryOAuthProvider {
  authorizationUrl?: URL;
  private client?: Record<string, unknown>;
  private saved?: Record<string, unknown>;
  private verifier = '';
  private discovery?: unknown;

  constructor(
    readonly clientMetadataUrl?: string,
    private readonly redirect = CLIENT_REDIRECT,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata() {
    return {
      client_name: 'Drey test assistant',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client as never;
  }

  saveClientInformation(information: Record<string, unknown>): void {
    this.client = information;
  }

  tokens() {
    return this.saved as never;
  }

  saveTokens(tokens: Record<string, unknown>): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** Kept with the verifier, so that the SDK checks the callback against the server it started with. */
  saveDiscoveryState(state: unknown): void {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery as never;
  }

  /** What an assistant forgets when the server refuses it (a grant ended: the tokens). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  /** The tokens the SDK saved (to check refresh and revocation from outside the client). */
  get accessToken(): string | undefined {
    return this.saved?.access_token as string | undefined;
  }
}

export type OAuthClientKind = 'v2' | 'v1';

export interface SignedInClient {
  provider: MemoryOAuthProvider;
  callTool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * An MCP client of `kind` that connects to `url`, is told to sign in (401 and its challenge), goes through
 * Drey's sign-in and consent pages as a person would (`password`), finishes the SDK's authorization and
 * connects again with its tokens.
 */
export async function signInWithSdk(
  kind: OAuthClientKind,
  url: string,
  options: {
    password: string;
    username?: string;
    provider?: MemoryOAuthProvider;
    /** What a person does from the authorization URL to the client's redirect (signInThrough unless given). */
    browser?: (authorizationUrl: string) => Promise<URL>;
  },
): Promise<SignedInClient> {
  const provider = options.provider ?? new MemoryOAuthProvider();
  const browse =
    options.browser ??
    (async (authorizationUrl: string) =>
      (await signInThrough(authorizationUrl, { ...options, redirectUri: provider.redirectUrl }))
        .callback);
  const endpoint = new URL(url);
  if (kind === 'v1') {
    const first = new HttpTransportV1(endpoint, { authProvider: provider });
    await expectUnauthorized(
      new ClientV1({ name: 'drey-oauth-v1', version: '1.0.0' }).connect(first),
    );
    const callback = await browse(String(provider.authorizationUrl));
    await first.finishAuth(callback.searchParams.get('code') ?? '');
    const client = new ClientV1({ name: 'drey-oauth-v1', version: '1.0.0' });
    await client.connect(new HttpTransportV1(endpoint, { authProvider: provider }));
    return {
      provider,
      callTool: (name, args) => client.callTool({ name, arguments: args }),
      close: () => client.close(),
    };
  }
  const first = new HttpTransportV2(endpoint, { authProvider: provider as never });
  await expectUnauthorized(
    new ClientV2(
      { name: 'drey-oauth-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    ).connect(first),
  );
  const callback = await browse(String(provider.authorizationUrl));
  await first.finishAuth(callback.searchParams);
  const client = new ClientV2(
    { name: 'drey-oauth-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(new HttpTransportV2(endpoint, { authProvider: provider as never }));
  return {
    provider,
    callTool: (name, args) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
  };
}

async function expectUnauthorized(connecting: Promise<unknown>): Promise<void> {
  try {
    await connecting;
  } catch (error) {
    if (error instanceof UnauthorizedV1 || error instanceof UnauthorizedV2) return;
    throw error;
  }
  throw new Error('the client connected without signing in');
}

/**
 * What an assistant signed in for `username` does and loses, as the check walks it: rows of a
 * protected dataset, the full export fetched by its link, then the grant ended by an administrator
 * (`adminToken`) and the next call refused (401 at the endpoint, an error for the SDK's client).
 */
export async function assistantJourney(
  client: SignedInClient,
  options: { base: string; adminToken: string; username: string },
): Promise<void> {
  const rows = await client.callTool('dataset_rows', {
    dataset: 'expenses_grouped',
    selections: { group_by: 'cat' },
  });
  expect(rows.isError).toBeFalsy();
  const read = rows.structuredContent as { total_rows: number; rows: unknown[] };
  expect(read.total_rows).toBeGreaterThan(0);
  expect(read.rows).toHaveLength(read.total_rows);
  const exported = await client.callTool('dataset_export', {
    dataset: 'expenses_grouped',
    format: 'csv',
    selections: { group_by: 'cat' },
  });
  expect(exported.isError).toBeFalsy();
  const link = exported.structuredContent as { url: string; total_rows: number };
  const file = await fetch(link.url);
  expect(file.status).toBe(200);
  expect((await file.text()).trim().split('\n')).toHaveLength(link.total_rows + 1);

  const headers = { Authorization: `Bearer ${options.adminToken}` };
  const clientId = (client.provider.clientInformation() as { client_id: string }).client_id;
  const grants = (await (
    await fetch(`${options.base}${P}/grants?username=${options.username}`, { headers })
  ).json()) as { grant_id: string; client_id: string }[];
  const grant = grants.find((row) => row.client_id === clientId);
  expect(grant).toBeDefined();
  const ended = await fetch(`${options.base}${P}/grants/${grant?.grant_id as string}`, {
    method: 'DELETE',
    headers,
  });
  expect(ended.status).toBe(200);
  const refused = await fetch(`${options.base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${client.provider.accessToken as string}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(refused.status).toBe(401);
  await expect(client.callTool('catalog', {})).rejects.toThrow();
}
