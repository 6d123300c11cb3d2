import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acquireLock,
  EmbeddedDatabaseInUseError,
  LockHolder,
  lockPath,
  processStartOf,
  readLock,
} from '@/database/embedded/embedded-lock';

/** A live process other than this one, to hold a lock. */
function sleeper(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child));
    child.once('error', reject);
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

function writeHolder(dir: string, holder: LockHolder): void {
  writeFileSync(lockPath(dir), JSON.stringify(holder));
}

describe('the embedded database lock', () => {
  let dir: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drey-lock-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('is taken with this process, its start and command, publishes a port, and is removed on release', () => {
    const lock = acquireLock(dir, 'server');
    expect(readLock(dir)).toEqual({
      pid: process.pid,
      processStart: processStartOf(process.pid),
      command: 'server',
      since: expect.any(String),
    });
    lock.publish({ port: 45678 });
    expect(readLock(dir)).toMatchObject({ pid: process.pid, port: 45678 });
    lock.publish({ http: 'http://127.0.0.1:4465' });
    expect(readLock(dir)).toMatchObject({ port: 45678, http: 'http://127.0.0.1:4465' });
    lock.release();
    expect(existsSync(lockPath(dir))).toBe(false);
    // Released: another taker gets it.
    acquireLock(dir, 'drey users reset-password').release();
  });

  it('refuses while another live process holds it, naming that process', async () => {
    const child = await sleeper();
    children.push(child);
    const pid = child.pid as number;
    writeHolder(dir, {
      pid,
      processStart: processStartOf(pid),
      command: 'server',
      since: '2026-11-26T00:00:00.000Z',
      port: 40000,
    });
    const onStale = jest.fn();
    let thrown: unknown;
    try {
      acquireLock(dir, 'server', onStale);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EmbeddedDatabaseInUseError);
    expect((thrown as Error).message).toContain(`in use by process ${pid} (server, since`);
    expect((thrown as Error).message).toContain(`kill ${pid}`);
    expect(onStale).not.toHaveBeenCalled();
    // The holder's lock is left as it was.
    expect(readLock(dir)).toMatchObject({ pid, port: 40000 });
  });

  it('takes over the lock of a process that no longer runs, and says whose it was', async () => {
    const child = await sleeper();
    const pid = child.pid as number;
    const holder = { pid, processStart: processStartOf(pid), command: 'server', since: 'then' };
    child.kill('SIGKILL');
    await exited(child);
    writeHolder(dir, holder);
    const onStale = jest.fn();
    const lock = acquireLock(dir, 'server', onStale);
    expect(onStale).toHaveBeenCalledWith(holder);
    expect(readLock(dir)).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('tells a later process of the same pid from the holder (a restarted container reuses pids)', async () => {
    const child = await sleeper();
    children.push(child);
    const pid = child.pid as number;
    const start = processStartOf(pid);
    // Without /proc a process's start is unknown and a live pid is taken as the holder.
    if (start === null) return;
    writeHolder(dir, { pid, processStart: start - 1, command: 'server', since: 'then' });
    const onStale = jest.fn();
    acquireLock(dir, 'server', onStale).release();
    expect(onStale).toHaveBeenCalled();
    // This process's own pid, written by an earlier process (pid 1 in a container): not held either.
    writeHolder(dir, { pid: process.pid, processStart: -1, command: 'server', since: 'then' });
    acquireLock(dir, 'server').release();
  });

  it('takes over a lock left empty by a process killed while writing it, once it is a few seconds old', () => {
    writeFileSync(lockPath(dir), '');
    const old = new Date(Date.now() - 10_000);
    utimesSync(lockPath(dir), old, old);
    const lock = acquireLock(dir, 'server');
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('never removes a lock that is not its own on release', async () => {
    const lock = acquireLock(dir, 'server');
    const child = await sleeper();
    children.push(child);
    // As if the lock had been taken over and taken again by another process meanwhile.
    writeHolder(dir, {
      pid: child.pid as number,
      processStart: null,
      command: 'server',
      since: 'x',
    });
    lock.release();
    expect(readLock(dir)).toMatchObject({ pid: child.pid });
  });
});
