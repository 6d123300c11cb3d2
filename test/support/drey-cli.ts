import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EXAMPLE_PROJECT, REPO_ROOT } from './server';

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
