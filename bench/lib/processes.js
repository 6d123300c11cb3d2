// @ts-check
'use strict';
const { spawn } = require('node:child_process');
const { closeSync, openSync, readFileSync } = require('node:fs');

/** @typedef {{ pid: number, stop: () => Promise<void>, exited: Promise<number | null> }} Child */

/**
 * Starts `node <script>` pinned to one CPU with taskset. Its output goes straight to `logFile` (a file
 * descriptor of its own, so that logging costs nothing on the load generator's core).
 * @param {number} cpu
 * @param {string[]} args node arguments (script first)
 * @param {Record<string, string>} env
 * @param {string} logFile
 * @returns {Child}
 */
function startPinned(cpu, args, env, logFile) {
  const log = openSync(logFile, 'w');
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    pid: /** @type {number} */ (child.pid),
    exited: /** @type {Promise<number | null>} */ (exited),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls `url` until it answers 2xx (or the child exits, or time runs out).
 * @param {string} url
 * @param {Child} child
 * @param {number} timeoutMs
 */
async function waitUntilOk(url, child, timeoutMs) {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    try {
      const reply = await fetch(url);
      await reply.arrayBuffer();
      if (reply.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `${url} did not answer 2xx within ${timeoutMs} ms${exited ? ' (process exited)' : ''}`,
  );
}

/**
 * The first line of a log file that `pick` accepts (returning what to keep of it), waiting for it.
 * @template T
 * @param {string} logFile
 * @param {(line: string) => T | undefined} pick
 * @param {Child} child
 * @param {number} timeoutMs
 * @returns {Promise<T>}
 */
async function waitForLine(logFile, pick, child, timeoutMs) {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      const found = pick(line);
      if (found !== undefined) return found;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `${logFile}: no expected line within ${timeoutMs} ms${exited ? ' (process exited)' : ''}`,
  );
}

/**
 * utime + stime in seconds from a `/proc/.../stat` file: a process's (`/proc/<pid>/stat`, every thread) or
 * one thread's (`/proc/<pid>/task/<tid>/stat`). USER_HZ is 100 on Linux.
 * @param {string} statFile
 */
function cpuSecondsOf(statFile) {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** @param {number} pid */
function readStatus(pid) {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}

/**
 * Resident memory of a process in MB: now, and the high-water mark since the last reset.
 * @param {number} pid
 */
function memoryOf(pid) {
  const status = readStatus(pid);
  const kb = (/** @type {string} */ name) =>
    Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/**
 * Resets the high-water mark of resident memory (VmHWM) of a process we own.
 * @param {number} pid
 */
function resetPeak(pid) {
  require('node:fs').writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

module.exports = { startPinned, waitUntilOk, waitForLine, memoryOf, resetPeak, cpuSecondsOf };
