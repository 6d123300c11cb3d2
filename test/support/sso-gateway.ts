import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server';
import { TempDir, tempDir } from './services';

/** Where the gateway's configuration lives: deploy/sso, run as it is shipped. */
export const GATEWAY_CONF_DIR = join(REPO_ROOT, 'deploy', 'sso');
const PROVIDER_SCRIPT = join(REPO_ROOT, 'test', 'support', 'oidc-provider.mjs');

/** A child process whose output is kept for error messages; stop() ends it and waits. */
class Child {
  private readonly out: string[] = [];
  private readonly err: string[] = [];
  readonly exited: Promise<number | null>;
  spawnError?: Error;

  /** Output goes to the pipes unless `files` names where the process writes it instead. */
  constructor(
    readonly proc: ChildProcess,
    private readonly files?: { stdout: string; stderr: string },
  ) {
    proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.out.push(chunk));
    proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.err.push(chunk));
    this.exited = new Promise((resolve) => {
      proc.once('error', (error) => {
        this.spawnError = error;
        resolve(null);
      });
      proc.once('exit', (code) => resolve(code));
    });
  }

  get running(): boolean {
    return !this.spawnError && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  stdout(): string {
    return this.files ? readIfThere(this.files.stdout) : this.out.join('');
  }

  output(): string {
    const stderr = this.files ? readIfThere(this.files.stderr) : this.err.join('');
    return `${this.spawnError ? `${this.spawnError.message}\n` : ''}${stderr}`;
  }

  async stop(): Promise<void> {
    if (this.running) this.proc.kill('SIGTERM');
    await this.exited;
  }
}

function readIfThere(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

async function waitFor(child: Child, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15000;
  while (!(await done())) {
    if (!child.running) throw new Error(`${what} exited: ${child.output()}`);
    if (Date.now() > deadline) throw new Error(`${what} did not start: ${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ProviderUser {
  password: string;
  name?: string;
  email?: string;
  /** Undefined: the provider sends no groups claim for this user. */
  groups?: string[];
}

export interface ProviderConfig {
  users: Record<string, ProviderUser>;
  clients: Record<string, unknown>[];
  /** The API whose access tokens are JWTs with this audience, when a client asks for this resource. */
  resource: { indicator: string; audience: string };
  /** A port chosen beforehand (a free one when absent), so a service can name the issuer before it serves. */
  port?: number;
}

export interface OidcProvider {
  issuer: string;
  stop(): Promise<void>;
}

/** test/support/oidc-provider.mjs in a process of its own, on a free port. */
export async function startOidcProvider(config: ProviderConfig): Promise<OidcProvider> {
  const child = new Child(
    spawn(process.execPath, [PROVIDER_SCRIPT], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', OIDC_PROVIDER_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let issuer = '';
  try {
    await waitFor(child, 'the OpenID Provider', () => {
      const [line, rest] = child.stdout().split('\n', 2);
      if (line && rest !== undefined)
        issuer = String((JSON.parse(line) as { issuer: string }).issuer);
      return Promise.resolve(issuer !== '');
    });
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { issuer, stop: () => child.stop() };
}

export interface Gateway {
  url: string;
  /** Apache's access log lines so far (user and request). */
  accessLog(): string;
  stop(): Promise<void>;
}

/**
 * Debian's Apache httpd running deploy/sso/httpd.conf in the foreground, with its settings in the
 * environment as a deployment would give them. Resolves once it answers HTTP.
 */
export async function startGateway(env: {
  DREY_UPSTREAM: string;
  OIDC_METADATA_URL: string;
  OIDC_CLIENT_ID: string;
  OIDC_CLIENT_SECRET: string;
  OIDC_CRYPTO_PASSPHRASE: string;
  SSO_HEADER_SECRET: string;
  GATEWAY_PORT: number;
}): Promise<Gateway> {
  const url = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  const runDir: TempDir = tempDir('drey-gateway-');
  // Files, not pipes: Node's pipes are sockets, which Apache cannot open as /proc/self/fd/1 and 2.
  const files = {
    stdout: join(runDir.path, 'stdout.log'),
    stderr: join(runDir.path, 'stderr.log'),
  };
  const stdout = openSync(files.stdout, 'a');
  const stderr = openSync(files.stderr, 'a');
  const child = new Child(
    spawn(
      process.env.APACHE2_PATH || 'apache2',
      ['-d', GATEWAY_CONF_DIR, '-f', 'httpd.conf', '-DFOREGROUND'],
      {
        env: {
          // Debian installs apache2 in /usr/sbin, which a non-root PATH may lack.
          PATH: `${process.env.PATH ?? ''}:/usr/sbin`,
          ...env,
          GATEWAY_PORT: String(env.GATEWAY_PORT),
          GATEWAY_URL: url,
          GATEWAY_RUN_DIR: runDir.path,
        },
        stdio: ['ignore', stdout, stderr],
      },
    ),
    files,
  );
  closeSync(stdout);
  closeSync(stderr);
  const stop = async () => {
    await child.stop();
    runDir.remove();
  };
  try {
    await waitFor(child, 'Apache httpd (apache2, libapache2-mod-auth-openidc)', async () => {
      const reply = await fetch(url, { redirect: 'manual' }).catch(() => undefined);
      return reply !== undefined;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, accessLog: () => child.stdout(), stop };
}
