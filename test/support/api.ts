import { createHmac } from 'node:crypto';
import { ADMIN_PASSWORD } from './server';
import { Reply, http } from './http';

/** Paths of both layouts for the example project. */
export const P = '/api/service-v0/project/expenses/v1';
export const L = '/service-v0/expenses/v1';
/** Paths of both layouts for the benchmark's project (bench/project). */
export const BENCH_P = '/api/service-v0/project/orders/v1';
export const BENCH_L = '/service-v0/orders/v1';

/** A client of one server: JSON helpers that carry a token. */
export class Api {
  constructor(readonly url: string) {}

  request(
    method: string,
    path: string,
    options: {
      token?: string;
      json?: unknown;
      form?: Record<string, string>;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    return http(`${this.url}${path}`, { method, headers, body });
  }

  get(path: string, token?: string, headers?: Record<string, string>): Promise<Reply> {
    return this.request('GET', path, { token, headers });
  }

  async login(username: string, password: string): Promise<string> {
    const reply = await this.request('POST', `${P}/login`, { form: { username, password } });
    if (reply.status !== 200)
      throw new Error(`login of ${username} failed: ${reply.status} ${reply.text}`);
    return reply.body.access_token as string;
  }

  adminToken(): Promise<string> {
    return this.login('admin', ADMIN_PASSWORD);
  }

  /** A named token (POST P/tokens) of `token`'s user, titled `title`. */
  async namedToken(token: string, title: string): Promise<string> {
    const reply = await this.request('POST', `${P}/tokens`, { token, json: { title } });
    if (reply.status !== 200)
      throw new Error(`creating the token "${title}" failed: ${reply.status} ${reply.text}`);
    return reply.body.access_token as string;
  }

  /** Creates a user as admin and returns a login token of theirs. */
  async userToken(
    adminToken: string,
    username: string,
    fields: Record<string, unknown> = {},
    password = `${username}-password`,
  ): Promise<string> {
    const created = await this.request('POST', `${P}/users`, {
      token: adminToken,
      json: { username, password, ...fields },
    });
    if (created.status !== 200)
      throw new Error(`creating ${username} failed: ${created.status} ${created.text}`);
    return this.login(username, password);
  }
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A JWT signed with HS256 by the given key (to forge tokens in tests). */
export function signJwt(
  claims: Record<string, unknown>,
  key: string,
  header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' },
): string {
  const head = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  if (header.alg === 'none') return `${head}.`;
  return `${head}.${createHmac('sha256', key).update(head).digest('base64url')}`;
}

export function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}
