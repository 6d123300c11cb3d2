import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
  UnauthorizedError as UnauthorizedV2,
} from '@modelcontextprotocol/client';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { signInThrough } from './oauth-flow';

/** Where the test client says it receives the authorization response (nothing listens: it is read; a port Chromium will open). */
export const CLIENT_REDIRECT = 'http://127.0.0.1:47823/mcp-client/callback';

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
