/** What a queued build carries: the id of its row in the build history, and the project to build. */
export interface BuildJob {
  buildId: string;
  /**
   * The identity (`expenses v1`) of the project of the process that queued it: a worker of another project
   * sharing the queue (the same REDIS_URL and REDIS_PREFIX) refuses it rather than build its own in its
   * place. Absent in jobs queued by an earlier version.
   */
  project?: string;
}

/**
 * What runs a queued build: `BuildRunner`. The queues know it by this shape only, so that the queue and the
 * runner (which names the job it runs) need not import each other.
 */
export interface BuildJobRunner {
  run(job: BuildJob): Promise<void>;
}

/**
 * What the build schedule puts on the BullMQ queue (a job scheduler's template: the same data every time):
 * the worker that takes it records the build in the history, as `schedule`, when it starts.
 */
export interface ScheduledBuildJob {
  trigger: 'schedule';
  project: string;
}

export function isScheduled(job: BuildJob | ScheduledBuildJob): job is ScheduledBuildJob {
  return (job as ScheduledBuildJob).trigger === 'schedule' && !(job as BuildJob).buildId;
}
