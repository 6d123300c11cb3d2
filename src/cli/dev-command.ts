import { ChildProcess, spawn } from 'node:child_process';
import { FSWatcher, watch } from 'node:fs';
import { join, relative } from 'node:path';
import { checkSql } from '@/cli/cli-commands';
import type { CliOutput } from '@/cli/drey';
import type { Env } from '@/engine/connections/connection-registry';
import type { EngineLimits } from '@/engine/duckdb/duckdb-instance';
import { loadProject } from '@/core/project/project-loader';

/** Changes within this long of each other make one rebuild (an editor saves several files at once). */
const SETTLE_MS = 300;

/**
 * `drey dev`: serves the project as `npm start` does, in a child process, and watches its folder. On a
 * change it checks the project whole (files and SQL, as `validate`) and prints the problems, or asks the
 * server to rebuild (SIGHUP), which reads the folder again and switches to it. Node's own recursive
 * `fs.watch` (inotify on Linux, supported since Node 19.1) is enough here: no watcher package.
 */
export async function dev(
  projectDir: string,
  env: Env,
  limits: EngineLimits,
  output: CliOutput,
): Promise<number> {
  const server = spawn(process.execPath, [join(__dirname, '..', 'main.js')], {
    env: { ...env, PROJECT_DIR: projectDir },
    stdio: 'inherit',
  });
  const say = (line: string) => output.err(`drey dev: ${line}`);
  say(`watching ${projectDir}; a change is checked, then built and served`);
  let timer: NodeJS.Timeout | undefined;
  let checking = Promise.resolve();
  const changed = new Set<string>();
  const watcher: FSWatcher = watch(projectDir, { recursive: true }, (_event, file) => {
    if (file) changed.add(String(file));
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed].map((name) => relative(projectDir, join(projectDir, name)));
      changed.clear();
      checking = checking.then(() => rebuild(projectDir, env, limits, server, files, say, output));
    }, SETTLE_MS);
  });
  const forward = (signal: NodeJS.Signals) => server.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve) =>
      server.once('exit', (code, signal) => resolve(code ?? (signal ? 0 : 1))),
    );
  } finally {
    clearTimeout(timer);
    watcher.close();
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
}

async function rebuild(
  projectDir: string,
  env: Env,
  limits: EngineLimits,
  server: ChildProcess,
  files: string[],
  say: (line: string) => void,
  output: CliOutput,
): Promise<void> {
  say(`changed: ${files.join(', ') || 'the project folder'}; checking`);
  try {
    await checkSql(loadProject(projectDir), env, limits);
  } catch (error) {
    output.err(error instanceof Error ? error.message : String(error));
    say('not rebuilt: the server goes on serving the last good build');
    return;
  }
  say('the project checks out; rebuilding');
  server.kill('SIGHUP');
}
