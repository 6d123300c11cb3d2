import { Injectable } from '@nestjs/common';
import { DataSource, FindOptionsWhere, In, IsNull, LessThan, Not, Repository } from 'typeorm';
import {
  BuildFault,
  BuildRun,
  BuildRunProgress,
  BuildTrigger,
  ModelBuildFigures,
} from '@/database/tables/build-runs.entity';

/**
 * The runs of `project` and those older than the column (null), which belong to whichever project reads
 * them; every run when no project is given.
 */
function ofProject(
  where: FindOptionsWhere<BuildRun>,
  project: string | undefined,
): FindOptionsWhere<BuildRun>[] {
  return project === undefined
    ? [where]
    : [
        { ...where, project },
        { ...where, project: IsNull() },
      ];
}

/**
 * The `build_runs` table: the history of builds, and the state of the one in flight. Methods that take a
 * project read and change only that project's runs (and the runs from before runs recorded one).
 */
@Injectable()
export class BuildRunsRepository {
  private readonly runs: Repository<BuildRun>;

  constructor(dataSource: DataSource) {
    this.runs = dataSource.getRepository(BuildRun);
  }

  findById(id: string): Promise<BuildRun | null> {
    return this.runs.findOneBy({ id });
  }

  /** The last `limit` runs, newest first. */
  newest(limit: number, project?: string): Promise<BuildRun[]> {
    return this.runs.find({
      where: project === undefined ? undefined : ofProject({}, project),
      order: { queuedAt: 'DESC' },
      take: limit,
    });
  }

  async insertQueued(
    id: string,
    requestedBy: string | null,
    project?: string,
    trigger: BuildTrigger | null = null,
  ): Promise<void> {
    await this.runs.insert({
      id,
      status: 'queued',
      requestedBy,
      trigger,
      models: [],
      project: project ?? null,
    });
  }

  /** Removes a run the queue refused, so that it never shows in the history. */
  async delete(id: string): Promise<void> {
    await this.runs.delete({ id });
  }

  async markRunning(id: string): Promise<void> {
    await this.runs.update({ id }, { status: 'running', startedAt: new Date() });
  }

  async markSucceeded(
    id: string,
    environmentFile: string | null,
    models: ModelBuildFigures[],
  ): Promise<void> {
    await this.runs.update(
      { id },
      { status: 'succeeded', finishedAt: new Date(), environmentFile, models },
    );
  }

  /** What a running build has done so far: the models finished, and where it is. */
  async recordProgress(
    id: string,
    models: ModelBuildFigures[],
    progress: BuildRunProgress,
  ): Promise<void> {
    await this.runs.update({ id, status: 'running' }, { models, progress });
  }

  /**
   * A failed build, whose `fault` it was, and the models it finished and where it stopped, when it got
   * that far.
   */
  async markFailed(
    id: string,
    error: string,
    fault: BuildFault,
    done?: { models: ModelBuildFigures[]; progress: BuildRunProgress },
  ): Promise<void> {
    await this.runs.update(
      { id },
      { status: 'failed', finishedAt: new Date(), error, fault, ...done },
    );
  }

  /**
   * Fails every queued or running run but `id` with `error`, as interrupted (a crash cut them off); the
   * number of runs it failed.
   */
  async failUnfinishedExcept(id: string, error: string, project?: string): Promise<number> {
    const result = await this.runs.update(
      ofProject({ status: In(['queued', 'running']), id: Not(id) }, project),
      { status: 'failed', finishedAt: new Date(), error, fault: 'interrupted' },
    );
    return result.affected ?? 0;
  }

  /**
   * Fails with `error`, as interrupted, every running run and every run queued before `queuedBefore`; the
   * number of runs it failed.
   */
  async failStale(queuedBefore: Date, error: string, project?: string): Promise<number> {
    const failed = {
      status: 'failed',
      finishedAt: new Date(),
      error,
      fault: 'interrupted',
    } as const;
    const running = await this.runs.update(ofProject({ status: 'running' }, project), failed);
    const queued = await this.runs.update(
      ofProject({ status: 'queued', queuedAt: LessThan(queuedBefore) }, project),
      failed,
    );
    return (running.affected ?? 0) + (queued.affected ?? 0);
  }
}
