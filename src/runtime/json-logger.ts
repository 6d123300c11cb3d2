import type { LoggerService } from '@nestjs/common';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

type Fields = Record<string, unknown>;

/**
 * Where log lines go: `now` false for a line that may wait for the end of the turn (the request line,
 * written once its response is finished); every other line is written at once, so that it is out before
 * what follows it (a response, a crash).
 */
export type LineWriter = (line: string, now: boolean) => void;

/**
 * Characters of log lines held before they are written without waiting for the end of the turn (64 Ki:
 * at most 192 KiB of UTF-8; a request line is about 200).
 */
export const HELD_LINES_MAX_CHARS = 64 * 1024;

/**
 * Writes the lines that may wait once per turn of the event loop rather than one by one: stdout on a file
 * or a pipe is written synchronously, a system call and a pass through Node's stream code per line, which
 * made the request line a visible part of a cached read's CPU (docs/performance.md, "Request lines held
 * for a turn").
 * Lines stay in order: a line that may not wait writes what is held first, then itself, at once; what is
 * held is also written when it reaches {@link HELD_LINES_MAX_CHARS} and when the process exits. A process
 * killed outright (SIGKILL) loses at most the request lines of its last turn.
 */
export class LinesPerTurn {
  private held: string[] = [];
  private chars = 0;
  private scheduled = false;

  constructor(
    private readonly out: (text: string) => void,
    private readonly maxChars = HELD_LINES_MAX_CHARS,
  ) {}

  readonly write: LineWriter = (line, now) => {
    this.held.push(line);
    this.chars += line.length;
    if (now || this.chars >= this.maxChars) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  };

  /** Writes what is held, now. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.held.length === 0) return;
    const text = this.held.length === 1 ? this.held[0] : this.held.join('');
    this.held = [];
    this.chars = 0;
    this.out(text);
  };
}

let stdoutLines: LinesPerTurn | undefined;

/** The process's stdout, a turn at a time; flushed when the process exits. */
function stdoutWriter(): LineWriter {
  if (!stdoutLines) {
    const lines = new LinesPerTurn((text) => process.stdout.write(text));
    process.on('exit', lines.flush);
    stdoutLines = lines;
  }
  return stdoutLines.write;
}

/**
 * One JSON object per line on stdout. Nest's own messages and ours share the format, so a log shipper reads
 * one shape. Callers pass fields, never request headers or bodies, so tokens and passwords cannot slip in.
 */
export class JsonLogger implements LoggerService {
  private readonly rank: number;

  private readonly write: LineWriter;

  constructor(level: LogLevel, write?: LineWriter) {
    this.rank = RANK[level];
    this.write = write ?? stdoutWriter();
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.rank;
  }

  emit(level: LogLevel, msg: string, fields: Fields = {}): void {
    this.line(level, msg, fields, true);
  }

  /** As {@link emit}, for a line that may wait for the end of the turn (see {@link LinesPerTurn}). */
  emitSoon(level: LogLevel, msg: string, fields: Fields): void {
    this.line(level, msg, fields, false);
  }

  private line(level: LogLevel, msg: string, fields: Fields, now: boolean): void {
    if (!this.enabled(level)) return;
    this.write(
      JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + '\n',
      now,
    );
  }

  /**
   * Nest's own `log` messages (modules initialised, each route mapped: about 80 lines at start-up) are at
   * `debug`, so that `info` shows what an operator reads: where the service listens and what it serves.
   */
  log(message: unknown, context?: string): void {
    this.nest('debug', message, context);
  }
  warn(message: unknown, context?: string): void {
    this.nest('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.nest('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.nest('debug', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.nest('error', message, context);
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    // Nest calls error(message, stack, context) or error(message, context).
    const fields: Fields = {};
    if (context !== undefined) {
      fields.context = context;
      if (stackOrContext) fields.stack = stackOrContext;
    } else if (stackOrContext !== undefined) {
      fields.context = stackOrContext;
    }
    if (message instanceof Error) {
      fields.stack = message.stack;
      this.emit('error', message.message, fields);
    } else {
      this.emit('error', typeof message === 'string' ? message : JSON.stringify(message), fields);
    }
  }

  private nest(level: LogLevel, message: unknown, context?: string): void {
    if (typeof message === 'object' && message !== null && !(message instanceof Error)) {
      const { msg, ...rest } = message as Fields;
      this.emit(level, typeof msg === 'string' ? msg : '', { context, ...rest });
      return;
    }
    this.emit(level, String(message), context === undefined ? {} : { context });
  }
}
