import { toBuildJson } from '@/builds/builds.mapper';
import type { BuildRun } from '@/database/tables/build-runs.entity';

export type BuildEventType = 'build.succeeded' | 'build.failed';

/** What a webhook receives when a build ends, in the Standard Webhooks envelope (`type`, `timestamp`, `data`). */
export interface BuildEvent {
  type: BuildEventType;
  /** When the build finished: the same body on every attempt, so one signature scheme checks them all. */
  timestamp: string;
  data: Record<string, unknown>;
}

export function buildEventType(run: BuildRun): BuildEventType {
  return run.status === 'succeeded' ? 'build.succeeded' : 'build.failed';
}

/** The event of a finished build: the build as the history shows it, with the project it belongs to. */
export function buildEvent(run: BuildRun): BuildEvent {
  const build = toBuildJson(run);
  return {
    type: buildEventType(run),
    timestamp: (run.finishedAt ?? new Date()).toISOString(),
    data: { ...build, project: run.project },
  };
}
