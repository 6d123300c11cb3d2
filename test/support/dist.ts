import { spawn } from 'node:child_process';
import { REPO_ROOT } from './server';

/**
 * Runs a short CommonJS script against the built service in a plain Node process (where requiring Nest's and
 * TypeORM's ES modules works) and returns what it printed last, parsed as JSON.
 */
export async function runDist<T>(script: string, env: Record<string, string> = {}): Promise<T> {
  const child = spawn(process.execPath, ['-e', script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`script failed (${code}): ${err}`);
  const lines = out.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as T;
}
