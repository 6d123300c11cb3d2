import { CronExpressionParser } from 'cron-parser';

/** When builds run by themselves: a cron pattern read in a time zone. */
export interface BuildSchedule {
  /** Five fields (minute to weekday) or six (seconds first), as cron and BullMQ read them. */
  pattern: string;
  /** An IANA zone, `UTC` unless given: `0 6 * * *` is six in the morning there. */
  timezone: string;
}

// A schedule is parsed by cron-parser, the parser BullMQ's job schedulers use themselves, so that what
// `validate` accepts is what the queue runs, in and out of Redis.
const MAX_PATTERN = 200;

/** Why `timezone` is not a time zone; undefined when it is one. */
export function zoneProblem(timezone: string): string | undefined {
  return validZone(timezone)
    ? undefined
    : `must be a time zone such as UTC or Europe/Paris, got "${timezone.slice(0, 64)}"`;
}

/** Why `pattern` is not a schedule (read in `timezone`, a valid zone); undefined when it is one. */
export function patternProblem(pattern: string, timezone = 'UTC'): string | undefined {
  if (pattern.length > MAX_PATTERN) return `must be at most ${MAX_PATTERN} characters`;
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    return (
      'must be a cron pattern of five fields (minute hour day month weekday) or six (seconds ' +
      `first), got ${fields}`
    );
  }
  try {
    CronExpressionParser.parse(pattern, { tz: timezone }).next();
  } catch (error) {
    return `is not a cron pattern: ${(error as Error).message}`;
  }
  return undefined;
}

function validZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** The first time after `from` that the schedule names. */
export function nextRun(schedule: BuildSchedule, from: Date): Date {
  return CronExpressionParser.parse(schedule.pattern, {
    tz: schedule.timezone,
    currentDate: from,
  })
    .next()
    .toDate();
}
