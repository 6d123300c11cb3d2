import { createHash, randomBytes } from 'node:crypto';

/** What a browser keeps of a sign-in: its cookies, by host and name (ports aside, as browsers do). */
export class CookieJar {
  private readonly cookies = new Map<string, Map<string, string>>();

  header(url: string): string {
    const cookies = this.cookies.get(new URL(url).hostname) ?? new Map<string, string>();
    return [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  keep(response: Response, url: string): void {
    const host = new URL(url).hostname;
    const cookies = this.cookies.get(host) ?? new Map<string, string>();
    this.cookies.set(host, cookies);
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A request as a browser makes it: its cookies sent, kept, and redirects not followed. */
export async function browse(
  jar: CookieJar,
  url: string,
  init: RequestInit = {},
): Promise<Response> {
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header(url) },
  });
  jar.keep(response, url);
  return response;
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** Registers a public client (RFC 7591) and answers its id. */
export async function register(base: string, name = 'Test assistant'): Promise<string> {
  const response = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  const body = (await response.json()) as { client_id?: string };
  if (response.status !== 201 || !body.client_id) {
    throw new Error(`registration answered ${response.status} ${JSON.stringify(body)}`);
  }
  return body.client_id;
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

/** An authorization request of `clientId` for `resource`, with a PKCE challenge, as a client sends it. */
export function authorizeUrl(base: string, clientId: string, resource: string): string {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'mcp',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    resource,
  });
  return `${base}/oauth/authorize?${query.toString()}`;
}

/** The action of a page's form. */
export function formAction(html: string): string {
  const match = /action="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no form in ${html.slice(0, 300)}`);
  return match[1].replace(/&amp;/g, '&');
}

export interface Authorization {
  /** Where the service sent the browser back: the redirect URI with `code` or `error`. */
  callback: URL;
  /** The pages seen on the way, in order (their <h1>). */
  pages: string[];
}

/**
 * The authorization code flow as a person goes through it in a browser: the authorization request, the
 * sign-in page (with `password`), the consent page (with `decision`), until the service sends the browser
 * back to the client.
 */
export async function authorize(
  base: string,
  options: {
    clientId: string;
    challenge?: string;
    resource?: string;
    username?: string;
    password: string;
    decision?: 'allow' | 'deny';
    jar?: CookieJar;
  },
): Promise<Authorization> {
  const jar = options.jar ?? new CookieJar();
  const query = new URLSearchParams({
    client_id: options.clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'mcp',
    state: 'state-1',
  });
  if (options.challenge !== undefined) {
    query.set('code_challenge', options.challenge);
    query.set('code_challenge_method', 'S256');
  }
  if (options.resource !== undefined) query.set('resource', options.resource);
  return signInThrough(`${base}/oauth/authorize?${query.toString()}`, { ...options, jar });
}

/**
 * What a person does in a browser from an authorization URL (a client's, as an SDK makes it): the sign-in
 * page (with `password`), the consent page (with `decision`), until the service sends the browser back to
 * the client's redirect URI (`redirectUri`, REDIRECT_URI unless given).
 */
export async function signInThrough(
  url: string,
  options: {
    username?: string;
    password: string;
    decision?: 'allow' | 'deny';
    jar?: CookieJar;
    redirectUri?: string;
  },
): Promise<Authorization> {
  const jar = options.jar ?? new CookieJar();
  const back = options.redirectUri ?? REDIRECT_URI;
  let response = await browse(jar, url);
  const pages: string[] = [];
  for (let step = 0; step < 10; step++) {
    if (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get('location') ?? '', url);
      if (location.href.startsWith(back)) return { callback: location, pages };
      response = await browse(jar, location.href);
      continue;
    }
    const html = await response.text();
    const title = /<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? `status ${response.status}`;
    pages.push(title);
    if (response.status !== 200) throw new Error(`${title}: ${html.slice(0, 500)}`);
    const action = new URL(formAction(html), url).href;
    response = action.endsWith('/login')
      ? await browse(
          jar,
          action,
          form({ username: options.username ?? 'admin', password: options.password }),
        )
      : await browse(jar, action, form({ decision: options.decision ?? 'allow' }));
  }
  throw new Error(`no way back to the client after ${pages.join(', ')}`);
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  token_type: string;
  scope?: string;
}

/** The token endpoint with a form; its JSON answer and status. */
export async function tokenRequest(
  base: string,
  fields: Record<string, string>,
): Promise<{ status: number; body: Tokens & { error?: string; error_description?: string } }> {
  const response = await fetch(`${base}/oauth/token`, form(fields));
  return { status: response.status, body: (await response.json()) as never };
}
