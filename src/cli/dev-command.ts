import { ChildProcess, spawn } from 'node:child_process';
import { EXIT_PROJECT_INVALID } from '@/runtime/exit-codes';
import { join, relative } from 'node:path';
import { watch } from 'chokidar';
import { validate } from '@/cli/cli-commands';
import { ignored } from '@/cli/watch-ignore';
import type { CliOutput } from '@/cli/cli-output';
import type { Env } from '@/engine/connections/connection-registry';
import type { EngineLimits } from '@/engine/duckdb/duckdb-instance';

/** Changes within this long of each other make one rebuild (an editor saves several files at once). */
const SETTLE_MS = 300;
/** At most this many changed files are named in one "changed:" line; a checkout can touch hundreds. */
const NAMED_CHANGES = 20;

/**
 * `drey dev`: serves the project as `npm start` does, in a child process, and watches its folder. On a
 * change it checks the project whole (files and SQL, as `validate`) and prints the problems, or asks the
 * server to rebuild (SIGHUP), which reads the folder again and switches to it. A project broken at the
 * start is the server's to handle: it serves the last good build and says what is wrong; with no build to
 * serve it exits, and dev starts it again once a change makes the project check out.
 *
 * The watcher is chokidar, not Node's recursive `fs.watch`: on Linux, Node 20 watches each file's inode,
 * so a file saved by rename (vim, `sed -i`, most IDEs' "safe write") was never seen again. chokidar
 * watches the folders, re-attaches to a path that is replaced, and picks up new files and folders.
 * `dataDir` is left out when it lies inside the project, or every build would trigger the next one.
 */
export async function dev(
  projectDir: string,
  env: Env,
  limits: EngineLimits,
  output: CliOutput,
  dataDir?: string,
): Promise<number> {
  const say = (line: string) => output.err(`drey dev: ${line}`);
  // The server, while one runs: none while the project does not load and no earlier build can be served
  // (it exits EXIT_PROJECT_INVALID then), until a change makes the project check out.
  let server: ChildProcess | undefined;
  let stopping = false;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  const startServer = () => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'main.js')], {
      env: { ...env, PROJECT_DIR: projectDir },
      stdio: 'inherit',
    });
    server = child;
    child.once('exit', (code, signal) => {
      if (server === child) server = undefined;
      if (code === EXIT_PROJECT_INVALID && !stopping) {
        say('nothing to serve until the project checks out: waiting for a change');
        return;
      }
      finish(code ?? (signal ? 0 : 1));
    });
  };
  startServer();
  let timer: NodeJS.Timeout | undefined;
  let checking = Promise.resolve();
  const changed = new Set<string>();
  const watcher = watch(projectDir, {
    ignoreInitial: true,
    ignored: (path: string) => ignored(projectDir, dataDir, path),
    // A save by rename shows as unlink + add of one path: chokidar reports it as one change.
    atomic: true,
  });
  watcher.on('all', (_event, path) => {
    if (changed.size <= NAMED_CHANGES) changed.add(relative(projectDir, path) || '.');
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed];
      changed.clear();
      checking = checking.then(async () => {
        if (!(await check(projectDir, env, limits, files, say, output))) return;
        if (server) {
          say('the project checks out; rebuilding');
          server.kill('SIGHUP');
        } else if (!stopping) {
          say('the project checks out; starting the server');
          startServer();
        }
      });
    }, SETTLE_MS);
  });
  watcher.on('error', (error) =>
    say(`watching failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  // Said once the folder is scanned: a change made before this line could be missed.
  watcher.once('ready', () =>
    say(`watching ${projectDir}; a change is checked, then built and served`),
  );
  const forward = (signal: NodeJS.Signals) => {
    stopping = true;
    if (server) server.kill(signal);
    else finish(0);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await finished;
  } finally {
    clearTimeout(timer);
    await watcher.close();
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
}

/** Checks the project whole after a change; prints its problems and returns false when it has any. */
async function check(
  projectDir: string,
  env: Env,
  limits: EngineLimits,
  files: string[],
  say: (line: string) => void,
  output: CliOutput,
): Promise<boolean> {
  const named =
    files.length > NAMED_CHANGES
      ? `${files.slice(0, NAMED_CHANGES).join(', ')} and more`
      : files.join(', ');
  say(`changed: ${named || 'the project folder'}; checking`);
  try {
    // As `validate` checks it: the problems of its files and those of the SQL they leave whole, in one
    // report (not the files' first, then the SQL's after another save). Its summary is not printed here.
    await validate(projectDir, { env, limits }, { out: () => undefined });
    return true;
  } catch (error) {
    output.err(error instanceof Error ? error.message : String(error));
    say('not rebuilt: the server goes on serving the last good build');
    return false;
  }
}
