import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EXAMPLE_PROJECT, REPO_ROOT } from './server';

export const CLI = join(REPO_ROOT, 'dist', 'cli', 'drey.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a user would, with `input` on its standard input. */
export function drey(args: string[], env: Record<string, string>, input = ''): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ENV_FILE: '', PROJECT_DIR: EXAMPLE_PROJECT, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end(input);
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
