import { readdirSync } from 'node:fs';

/**
 * The files of `<dataDir>/environments` that a process cut off mid-write (SIGKILL, a crash, a power cut) left
 * behind, told apart from what a live process is writing by the process id their names carry:
 * - `cli-<pid>-<time>.duckdb` (with its `.wal` and its `.tmp` spill folder): a `drey build`;
 * - `<build>.duckdb.<pid>.part`: an environment being fetched from the store;
 * - `current.<pid>.tmp`: the pointer being rewritten;
 * and the `.wal`, `.tmp` or `.project.json` of a `.duckdb` file that no longer exists (DuckDB creates the database file
 * first, so a live build's companions always have theirs).
 * A server build's `<uuid>.duckdb` carries no pid: it is the server's to remove, knowing from its queue that
 * no build runs (`EnvironmentManager.sweep`). A DATA_DIR belongs to one machine (docs/deployment.md), so a
 * process id in a name is one of this machine's.
 */
const CLI_BUILD = /^cli-(\d+)-[A-Za-z0-9_-]+\.duckdb$/;
const PART = /^[A-Za-z0-9_-]{1,100}\.duckdb\.(\d+)\.part$/;
const POINTER_TMP = /^current\.(\d+)\.tmp$/;
const COMPANION = /^([A-Za-z0-9_-]{1,100}\.duckdb)\.(wal|tmp|project\.json)$/;

/** The build id of a `drey build` in process `pid`, at `time`: its file names its writer. */
export function cliBuildId(pid: number, time: Date): string {
  return `cli-${pid}-${time.toISOString().replace(/[:.]/g, '-')}`;
}

/** The process id a file's name carries, when it is one a process writes and then renames or removes. */
export function writerOf(name: string): number | undefined {
  const match = CLI_BUILD.exec(name) ?? PART.exec(name) ?? POINTER_TMP.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** Whether a process of this id runs on this machine (of any user: EPERM means it exists). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The names in `names` that are leftovers, to be removed: those whose writer is dead, and the companions
 * of a database file that is gone. `keep` (the current environment's file) is never one.
 */
export function leftovers(
  names: readonly string[],
  alive: (pid: number) => boolean = processAlive,
  keep?: string,
): string[] {
  const present = new Set(names);
  return names.filter((name) => {
    if (name === keep) return false;
    const writer = writerOf(name);
    if (writer !== undefined) return !alive(writer);
    const companion = COMPANION.exec(name);
    if (!companion) return false;
    const database = companion[1];
    if (database === keep) return false;
    if (!present.has(database)) return true;
    // The companion of a dead writer's file goes with it.
    const owner = writerOf(database);
    return owner !== undefined && !alive(owner);
  });
}

/** The leftovers of a folder's entries (an absent folder has none). */
export function leftoversIn(dir: string, keep?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return leftovers(names, processAlive, keep);
}
