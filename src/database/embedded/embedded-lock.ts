import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/*
 * One writer per embedded database. PGlite is Postgres in one process: two processes that open the same
 * folder each believe they own it, and what one writes the other overwrites or damages (a password reset by
 * `drey users reset-password` beside a running server was lost that way, and the folder could be left
 * unreadable). So whoever opens DATA_DIR/pglite holds DATA_DIR/pglite.lock first; the lock says who holds it
 * and, once the database is served, on which loopback port, so that a command line can write through the
 * holder instead of opening a second PGlite. Framework-free: the server and the CLI use it alike.
 */

/** What the lock file says. */
export interface LockHolder {
  pid: number;
  /** The holder's start, in clock ticks since boot (Linux /proc), to tell it from a later process of that pid. */
  processStart: number | null;
  /** What holds it: `server`, `drey users reset-password`, ... */
  command: string;
  /** When it was taken (ISO 8601). */
  since: string;
  /** The loopback port the holder serves the database on, once it does. */
  port?: number;
  /**
   * Where a server holding it answers HTTP, on a loopback address (`http://127.0.0.1:4465`), once it
   * listens: `drey mcp` relays to its MCP endpoint instead of opening the database a second time.
   */
  http?: string;
  /** The served project's path prefix then (`/api/service-v0/project/expenses/v1`), with `http`. */
  prefix?: string;
}

/** The lock is held by another live process. */
export class EmbeddedDatabaseInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `The embedded database in ${join(dataDir, 'pglite')} is in use by process ${holder.pid} ` +
        `(${holder.command}, since ${holder.since}). Two processes must never open it: stop that process ` +
        `first (kill ${holder.pid}), or give this one another DATA_DIR.`,
    );
  }
}

export function lockPath(dataDir: string): string {
  return join(dataDir, 'pglite.lock');
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised name, which may contain spaces); null elsewhere. */
export function processStartOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that wrote the lock still runs. A pid alone is not enough: a container restarted
 * after a crash often gets the very same pid (1, or a small number), so where /proc tells a process's start,
 * the holder is alive only if the process of that pid started when the holder did.
 */
export function holderAlive(holder: LockHolder): boolean {
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  const now = processStartOf(holder.pid);
  if (holder.pid === process.pid) return now !== null && now === holder.processStart;
  if (!pidAlive(holder.pid)) return false;
  return holder.processStart === null || now === null || now === holder.processStart;
}

/** The lock's holder, or undefined when there is no lock (or it is being written this instant). */
export function readLock(dataDir: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as LockHolder;
    return typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A held lock: `publish` says where the holder serves the database (and, a server, HTTP); `release` removes
 * it if still ours.
 */
export interface EmbeddedLock {
  readonly holder: LockHolder;
  publish(where: Pick<LockHolder, 'port' | 'http' | 'prefix'>): void;
  release(): void;
}

/** Told when a lock left by a process that no longer runs is taken over. */
export type OnStale = (holder: LockHolder) => void;

/**
 * Takes the lock on `dataDir`'s embedded database, or throws {@link EmbeddedDatabaseInUseError} naming the
 * live holder. A lock whose process is gone (killed, crashed, the machine restarted) is recovered, and
 * `onStale` is told. The lock is created with O_EXCL, so of two processes starting at once exactly one gets it.
 */
export function acquireLock(dataDir: string, command: string, onStale?: OnStale): EmbeddedLock {
  const path = lockPath(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const holder: LockHolder = {
    pid: process.pid,
    processStart: processStartOf(process.pid),
    command,
    since: new Date().toISOString(),
  };
  // A few rounds: each either takes the lock, throws, or removes a stale one and tries again.
  for (let round = 0; round < 5; round++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const found = readLock(dataDir);
      if (!found) {
        // Empty or unreadable: either being written this instant (wait for it) or left half-written by a
        // process killed between creating and writing it (a few seconds old: take it over).
        if (ageMs(path) < 3000) {
          sleepMs(100);
          continue;
        }
        removeIfUnchanged(path, undefined);
        continue;
      }
      if (holderAlive(found)) throw new EmbeddedDatabaseInUseError(dataDir, found);
      if (removeIfUnchanged(path, found)) onStale?.(found);
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(holder));
    } finally {
      closeSync(fd);
    }
    return ownLock(dataDir, holder);
  }
  const found = readLock(dataDir);
  if (found) throw new EmbeddedDatabaseInUseError(dataDir, found);
  throw new Error(`could not take the lock ${path}`);
}

function ownLock(dataDir: string, holder: LockHolder): EmbeddedLock {
  const path = lockPath(dataDir);
  const mine = () => {
    const now = readLock(dataDir);
    return now?.pid === holder.pid && now.since === holder.since;
  };
  let released = false;
  // A process that exits without stopping its database (process.exit after a failed start) still leaves
  // no lock behind; a crash or SIGKILL does, and the next start recovers it.
  const onExit = () => lock.release();
  const lock: EmbeddedLock = {
    holder,
    publish(where) {
      Object.assign(holder, where);
      if (!mine()) return;
      // Written aside and renamed over: a reader never sees half a file.
      writeFileSync(`${path}.${process.pid}`, JSON.stringify(holder), { mode: 0o600 });
      renameSync(`${path}.${process.pid}`, path);
    },
    release() {
      if (released) return;
      released = true;
      process.removeListener('exit', onExit);
      try {
        if (mine()) unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
  process.on('exit', onExit);
  return lock;
}

/**
 * Removes a stale lock, unless another process replaced it meanwhile: it is moved aside first (atomic), and
 * put back if what was moved is not what was judged stale.
 */
function removeIfUnchanged(path: string, judged: LockHolder | undefined): boolean {
  const aside = `${path}.stale.${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return false;
  }
  let moved: LockHolder | undefined;
  try {
    moved = JSON.parse(readFileSync(aside, 'utf8')) as LockHolder;
  } catch {
    moved = undefined;
  }
  const same = judged
    ? moved?.pid === judged.pid && moved.since === judged.since
    : moved === undefined;
  if (!same) {
    try {
      linkSync(aside, path);
    } catch {
      // Someone took the lock meanwhile: theirs stands.
    }
  }
  unlinkSync(aside);
  return same;
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The log line of a recovered lock, the same from main.ts and the database module. */
export function logStaleLock(
  logger: { emit(level: 'warn', msg: string, fields: Record<string, unknown>): void },
  holder: LockHolder,
): void {
  logger.emit('warn', 'embedded database: took over the lock of a process that no longer runs', {
    pid: holder.pid,
    command: holder.command,
    since: holder.since,
  });
}
