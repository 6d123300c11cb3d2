import { readdirSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

const TASKS = '/proc/self/task';

/** Threads that keep their priority besides the main one: the embedded database's, which answers it. */
const kept = new Set<number>();

/** Keeps a thread (an id from {@link currentThreadId}) at the event loop's priority. */
export function keepPriority(threadId: number): void {
  kept.add(threadId);
}

/** The calling thread's id (Linux), for {@link keepPriority}; undefined where it cannot be told. */
export function currentThreadId(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gives every thread of this process but the main one a lower scheduling priority (a higher nice value),
 * so that work running off the event loop yields the CPU to it: DuckDB's queries and `COPY` writers (on
 * libuv's pool and DuckDB's own threads), file reads, compression. With the process on one core, a 1M-row
 * export's writer took half of the CPU from the event loop (the kernel shares a core evenly between
 * runnable threads of one nice value), and the cached reads answered meanwhile had a p99 3.45 times their
 * own (`npm run bench`, tail phase); a nice of 10 gives such a thread about a tenth of the main thread's
 * share when both want the core, and all of it when the event loop is idle (that p99 is now 1.07 times its
 * own, and the uncached query's median 1.10 times DuckDB's own against 1.22 before). Exports still run at
 * full speed on an idle server.
 *
 * Linux keeps a nice value per thread, and Node names its threads alike ("node"), so the threads are told
 * apart only by id: the main thread's is the process id. A thread inherits its creator's value, so DuckDB's
 * threads started from libuv's pool get it; the others (started later from the main thread) are found by
 * {@link apply}, which the server runs every second. Elsewhere than Linux there is no `/proc/self/task`
 * and nothing is done.
 */
export class BackgroundThreads {
  private timer?: NodeJS.Timeout;

  /** @param nice 1 to 19 (0: leave every thread as it is). */
  constructor(
    private readonly nice: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Lowers threads not lowered yet; returns how many it lowered. */
  apply(): number {
    if (this.nice === 0) return 0;
    let tasks: string[];
    try {
      tasks = readdirSync(TASKS);
    } catch {
      return 0;
    }
    let lowered = 0;
    for (const task of tasks) {
      const id = Number(task);
      if (id === process.pid || kept.has(id)) continue;
      try {
        if (getPriority(id) >= this.nice) continue;
        setPriority(id, this.nice);
        lowered++;
      } catch (error) {
        // A thread that ended between the listing and now has nothing left to lower.
        if (isGone(error)) continue;
        this.onError(error);
        this.stop();
        return lowered;
      }
    }
    return lowered;
  }

  /** Applies now and then every `intervalMs`, without keeping the process alive. */
  start(intervalMs = 1000): void {
    if (this.nice === 0 || this.timer) return;
    this.apply();
    this.timer = setInterval(() => this.apply(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** Node's SystemError for a thread id that no longer exists. */
function isGone(error: unknown): boolean {
  return (error as { info?: { code?: string } }).info?.code === 'ESRCH';
}
