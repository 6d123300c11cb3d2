import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The parts of `oidc-provider` (the OpenID-certified authorization server library) that Drey uses, typed
 * here: the library ships no types. It is an ES module only; Node loads it with `require` (require(esm)),
 * through a require of Node's own so that a test runner's module loader is not in the way.
 */
export interface OidcProvider {
  callback(): (request: IncomingMessage, response: ServerResponse) => unknown;
  interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<Interaction>;
  interactionFinished(
    request: IncomingMessage,
    response: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  proxy: boolean;
  /** A Koa middleware before the library's own. */
  use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
  Grant: GrantModel;
  AccessToken: { find(value: string): Promise<AccessTokenRecord | undefined> };
  Client: { find(id: string): Promise<ClientRecord | undefined> };
}

/** What Drey reads and sets of the library's (Koa's) request context. */
export interface KoaContext {
  method: string;
  path: string;
  querystring: string;
  req: IncomingMessage;
  status: number;
  body: unknown;
  set(name: string, value: string): void;
}

export interface Interaction {
  uid: string;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, unknown> & { client_id?: string; resource?: string | string[] };
  session?: { accountId?: string };
  grantId?: string;
  returnTo: string;
}

export interface GrantRecord {
  jti: string;
  accountId: string;
  clientId: string;
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
  destroy(): Promise<void>;
}

export interface GrantModel {
  new (properties: { accountId: string; clientId: string }): GrantRecord;
  find(id: string): Promise<GrantRecord | undefined>;
}

export interface AccessTokenRecord {
  jti: string;
  accountId: string;
  clientId: string;
  grantId: string;
  aud?: string | string[];
  scope?: string;
  isExpired: boolean;
}

export interface ClientRecord {
  clientId: string;
  clientName?: string;
  redirectUris?: string[];
  clientIdMetadataDocument?: boolean;
}

export interface OidcProviderModule {
  default: new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
  errors: Record<string, new (...args: unknown[]) => Error>;
}

let loaded: OidcProviderModule | undefined;

/** The library, loaded once, on first use (it costs nothing to a service that does not sign anyone in). */
export function oidcProvider(): OidcProviderModule {
  loaded ??= createRequire(__filename)('oidc-provider') as OidcProviderModule;
  return loaded;
}
