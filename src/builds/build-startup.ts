import type { BuildHistory } from '@/builds/build-history';
import { errorMessage } from '@/builds/build-runner';
import type { BuildSubmitter } from '@/builds/build-submitter';
import type { EnvironmentSync } from '@/builds/environment-sync.service';
import type { OperatorBuilds } from '@/builds/operator-builds';
import { describeProblem, ProjectError } from '@/core/project-errors';
import type { Project } from '@/core/project/project';
import type { Engine } from '@/engine/engine';
import { BuildInterruptedError } from '@/engine/materialize/materialize-environment';
import type { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { JsonLogger } from '@/runtime/json-logger';
import { startupStep } from '@/runtime/startup-step';

/**
 * What builds do when the application starts: runs a dead process left are failed, a build another replica
 * published is fetched, the schedule is set, and then the build served is checked against the project, or
 * the first build starts when there is none.
 */
export class BuildStartup {
  constructor(
    private readonly engine: Engine,
    private readonly history: BuildHistory,
    private readonly sync: EnvironmentSync,
    private readonly operator: OperatorBuilds,
    private readonly submitter: BuildSubmitter,
    private readonly parameters: ParameterCatalogService,
    private readonly logger: JsonLogger,
  ) {}

  async run(): Promise<void> {
    await this.history.markInterrupted();
    // A build published while this process was away (or before its DATA_DIR existed) is served first.
    await this.sync.catchUp();
    await this.operator.startSchedule();
    const missing = await this.engine.missingTables();
    if (missing && missing.length > 0) {
      // The build found predates models of the project (another checkout built it, or models were added
      // since): it goes on serving what it can, readiness says it cannot answer every dataset, and a build
      // of the project as it is now replaces it.
      this.logger.emit('warn', 'the build served lacks tables of the project: rebuilding', {
        buildId: this.engine.environments.currentId,
        missing,
      });
      await this.operator.rebuild('the build served lacks tables of the project');
    } else if (this.engine.ready) {
      await this.checkServedProject();
    } else {
      const foreign = this.engine.environments.foreign;
      if (foreign) {
        this.logger.emit('info', 'building: the data folder holds no build of this project', {
          found: foreign.buildId,
          builtFrom: foreign.identity ?? 'unknown (built by an earlier version)',
          serves: this.engine.environments.identity,
        });
      }
      // The first start builds; readiness waits for it. Another process may already be building.
      void this.firstBuild();
    }
  }

  /**
   * Served from an earlier build, the project's SQL (perhaps edited since) must still plan on it. When it
   * does not, or the folder did not load at all (main.ts then started with the project kept with that
   * build), the build goes on serving the project it was built from, as after a failed build, and the log
   * says what is wrong, where, and what to do: fix the files (a rebuild of the same files would fail the
   * same way), or, when the build models changed since, a build is started here for the new tables.
   */
  private async checkServedProject(): Promise<void> {
    const served = this.engine.project;
    startupStep(this.logger, "checking the project's SQL on the build served", {
      buildId: this.engine.environments.currentId,
    });
    const problems = await this.engine.checkModels(await this.parameters.catalog());
    if (problems.length === 0) {
      // What a later start falls back to when the folder no longer checks out.
      this.engine.keepServedProject();
      return;
    }
    const kept = this.engine.keptProject();
    if (!kept) {
      // A build made by an earlier version kept no project: nothing else to serve it with.
      const error = new ProjectError(problems);
      error.message +=
        '\n(planned on the build served, which kept no copy of the project it was built from: fix the ' +
        'files named above; if a build model changed since, `npm run drey -- build` makes its tables)';
      throw error;
    }
    await this.engine.serveWithCurrentBuild(kept.project);
    const buildModelsChanged = builtModels(served) !== builtModels(kept.project);
    this.logger.emit('error', 'the project does not check out: serving the last good build', {
      buildId: kept.buildId,
      projectDir: served.dir,
      problems: problems.map(describeProblem),
      hint: buildModelsChanged
        ? 'its build models changed since that build: building the project as it is now; if that ' +
          'build fails too, fix the files named, then save (drey dev) or rebuild (POST P/build, SIGHUP)'
        : 'fix the files named, then save (drey dev) or rebuild (POST P/build, SIGHUP); until then the ' +
          'project as it was at that build is served',
    });
    if (buildModelsChanged)
      await this.operator.rebuild('the project checks out only with new tables');
  }

  private async firstBuild(): Promise<void> {
    try {
      const submission = await this.submitter.submit(null, 'start');
      await submission?.done;
    } catch (error) {
      // The queue may lose track of a build that ran (Redis gone as it finished: "stalled"); the history,
      // written by the runner, says how it really ended.
      if (this.engine.ready) return;
      // Nobody awaits the first build, so nothing here may reject: a SIGTERM during it interrupts the build
      // and then closes the database, and reading the history could fail (an unhandled rejection made the
      // stopping process exit 1). The runner has recorded how the build ended either way.
      if (error instanceof BuildInterruptedError) {
        this.logger.emit('info', 'first build interrupted', { error: errorMessage(error) });
        return;
      }
      await this.history.whyNotServing().catch((reading: unknown) =>
        this.logger.emit('warn', 'why the first build failed could not be read', {
          error: errorMessage(reading),
        }),
      );
      // Recorded in the history by the runner; the service keeps answering 503 not_ready for data.
      this.logger.emit('error', 'first build failed', { error: errorMessage(error) });
    }
  }
}

/** What a build makes of a project (its seeds, sources and build models): equal text, equal tables. */
function builtModels(project: Project): string {
  return JSON.stringify(
    project.models.filter(
      (model) => model.kind === 'seed' || model.kind === 'source' || model.kind === 'build',
    ),
  );
}
