import type { LoggerService } from '@nestjs/common';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

type Fields = Record<string, unknown>;

/**
 * One JSON object per line on stdout. Nest's own messages and ours share the format, so a log shipper reads
 * one shape. Callers pass fields, never request headers or bodies, so tokens and passwords cannot slip in.
 */
export class JsonLogger implements LoggerService {
  private readonly rank: number;

  constructor(
    level: LogLevel,
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {
    this.rank = RANK[level];
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.rank;
  }

  emit(level: LogLevel, msg: string, fields: Fields = {}): void {
    if (!this.enabled(level)) return;
    this.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + '\n');
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
