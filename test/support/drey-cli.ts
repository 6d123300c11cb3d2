import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { EXAMPLE_PROJECT, LogLine, REPO_ROOT } from './server';

export const CLI = join(REPO_ROOT, 'dist', 'cli', 'drey.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a user would (`node dist/cli/drey.js`), with only PATH, no .env and the example
 * project besides `env`; `input` is its standard input, `closeAfter` closes its stdout after that many
 * bytes (a `| head`).
 */
export function drey(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; closeAfter?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', PROJECT_DIR: EXAMPLE_PROJECT, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (options.closeAfter !== undefined && stdout.length >= options.closeAfter)
        child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end(options.input ?? '');
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The password `drey users reset-password <name>` printed. */
export function printedPassword(ran: Ran): string {
  const password = /shown once\):\n\s+(\S+)\n$/.exec(ran.stdout)?.[1];
  if (!password) throw new Error(`no password printed: ${ran.stdout} ${ran.stderr}`);
  return password;
}

/**
 * `drey dev` as a process (`npm run dev` or the built CLI): its JSON log lines (the server's) and its stderr
 * (dev's own lines). `waitMs`: how long `waitFor` waits when not told, to fail with dev's stderr before the
 * test's own timeout does.
 */
export class Dev {
  readonly logs: LogLine[] = [];
  stderr = '';

  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly waitMs = 90_000,
  ) {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines)
        if (line.startsWith('{')) this.logs.push(JSON.parse(line) as LogLine);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  count(msg: string): number {
    return this.logs.filter((line) => line.msg === msg).length;
  }

  async waitFor(what: () => boolean, ms = this.waitMs): Promise<void> {
    const deadline = Date.now() + ms;
    while (!what()) {
      if (Date.now() > deadline) throw new Error(`timed out; stderr: ${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const closed = new Promise<number | null>((resolve) => this.child.once('close', resolve));
    this.child.kill('SIGTERM');
    return closed;
  }
}
