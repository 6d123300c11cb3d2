import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { NotReadyError } from '@/core/errors';
import type { Project } from '@/core/project/project';
import { projectSnapshot } from '@/core/project/project-snapshot';
import {
  checkBuildId,
  ForeignBuild,
  keptProjectOf,
  parsePointer,
  POINTER,
  projectIdentity,
  snapshotFile,
} from '@/engine/environment/build-pointer';
import { DEFAULT_ENGINE_LIMITS, EngineLimits } from '@/engine/duckdb/duckdb-instance';
import { Environment, Lease, removeDatabaseFiles } from '@/engine/environment/environment';
import { leftoversIn, processAlive, writerOf } from '@/engine/process/leftovers';

export { checkBuildId, projectIdentity };
export type { ForeignBuild };

/**
 * The environments under `<dataDir>/environments`: `<buildId>.duckdb` files and a `current` file naming the
 * one readers use and the project it was built from. Switching rewrites `current` by rename, so every
 * process sharing the folder sees either the old or the new name, never a partial one, and picks the change
 * up on its next query. A pointer to another project's build (a folder shared by mistake, or a build of an
 * earlier version that recorded no project) is never followed: what is served stays, and `foreign` says
 * what was found.
 */
export class EnvironmentManager {
  readonly dir: string;
  private current?: Environment;
  /** Identity of the pointer file last read, to notice a switch made by another process cheaply. */
  private pointerStamp = '';
  /** The pointer's stamp as read in this turn of the event loop (see {@link stampThisTurn}). */
  private turnStamp?: string;
  private refreshing?: Promise<void>;
  private unavailable?: string;
  private foreignBuild?: ForeignBuild;

  /**
   * @param switched told of every environment readers switch to (built here or followed), before any
   * reader gets it: the engine serves that environment's project from then on.
   * @param limits what each environment opened here may use (memory, threads, disk).
   * @param identity the project's identity ({@link projectIdentity}): written into the pointer by builds
   * made here, required of builds made elsewhere before they are followed.
   * @param onForeign told once of each pointer to another project's build that is not followed.
   */
  constructor(
    dataDir: string,
    private readonly switched: (environment: Environment) => void = () => undefined,
    readonly limits: EngineLimits = DEFAULT_ENGINE_LIMITS,
    readonly identity = 'unnamed v0',
    private readonly onForeign: (found: ForeignBuild) => void = () => undefined,
    /** The only folder environments opened here may write, with `COPY ... TO`: exports. */
    readonly exportDir?: string,
  ) {
    this.dir = join(dataDir, 'environments');
  }

  /**
   * The build the pointer names when it is another project's (and so not served here), until the pointer
   * names one of this project again; undefined otherwise.
   */
  get foreign(): ForeignBuild | undefined {
    return this.foreignBuild;
  }

  fileOf(buildId: string): string {
    checkBuildId(buildId);
    return join(this.dir, `${buildId}.duckdb`);
  }

  /**
   * Keeps `project` beside the build `buildId` as the project that build serves (see
   * {@link projectSnapshot}): written by a build once it is served, and at a start whose project checked
   * out on it. Best effort: a data folder that cannot take it only loses the fallback.
   */
  keepProject(buildId: string, project: Project): void {
    try {
      writeFileSync(snapshotFile(this.fileOf(buildId)), projectSnapshot(project));
    } catch {
      // The build is served either way; only a later start on a broken folder misses it.
    }
  }

  /** The project kept beside build `buildId` ({@link keepProject}), as served from `projectDir`. */
  keptProject(buildId: string, projectDir: string): Project | undefined {
    return keptProjectOf(this.fileOf(buildId), projectDir);
  }

  /**
   * Why there is nothing to serve when it is not the wait for a first build (which has failed, say): what
   * requests are answered until an environment opens. Undefined again for the plain wait.
   */
  explainUnavailable(reason: string | undefined): void {
    this.unavailable = reason;
  }

  /** Whether an environment is open (false until the first build when none exists). */
  get ready(): boolean {
    return this.current !== undefined;
  }

  get currentId(): string | undefined {
    return this.current?.id;
  }

  /** Opens the current environment, if one was built before. */
  async open(): Promise<boolean> {
    mkdirSync(this.dir, { recursive: true });
    if (this.stamp() !== this.pointerStamp) await this.refresh();
    return this.ready;
  }

  /**
   * The current environment's id when no other process has switched it since it was last followed, without
   * waiting; undefined otherwise (then {@link acquire} follows the switch).
   */
  freshId(): string | undefined {
    return this.current && this.stampThisTurn() === this.pointerStamp ? this.current.id : undefined;
  }

  /** Holds the current environment until `release()`; a switch meanwhile does not close it. */
  async acquire(): Promise<Lease> {
    // Checked here rather than only in refresh(): an async call costs promises on every request.
    if (this.stampThisTurn() !== this.pointerStamp) await this.refresh();
    if (!this.current) {
      throw this.unavailable
        ? new NotReadyError(this.unavailable, null)
        : new NotReadyError('The data environment has not been built yet; try again shortly');
    }
    return this.current.acquire();
  }

  async use<T>(work: (environment: Environment) => Promise<T>): Promise<T> {
    const lease = await this.acquire();
    try {
      return await work(lease.environment);
    } finally {
      lease.release();
    }
  }

  /** Makes a freshly built environment the current one, here and, through the pointer, everywhere. */
  install(environment: Environment): void {
    if (environment.project) this.keepProject(environment.id, environment.project);
    this.point(environment.id);
    this.pointerStamp = this.stamp();
    this.turnStamp = undefined;
    this.foreignBuild = undefined;
    this.swap(environment);
  }

  /** Names `buildId`, of this project, in the pointer: by rename, so that no reader sees half of it. */
  private point(buildId: string): void {
    const pointer = join(this.dir, POINTER);
    const temporary = `${pointer}.${process.pid}.tmp`;
    writeFileSync(temporary, `${buildId}\n${this.identity}\n`);
    renameSync(temporary, pointer);
  }

  /**
   * Makes a build made elsewhere the current one here: `write` puts its file at the path it is given (a
   * temporary name, renamed once complete), then the pointer names it and readers switch to it as to any
   * build. A file already here (a shared folder) is not written again. The caller makes sure the build is
   * of this project (the store keys builds by project).
   */
  async adopt(buildId: string, write: (path: string) => Promise<void>): Promise<void> {
    const file = this.fileOf(buildId);
    mkdirSync(this.dir, { recursive: true });
    if (!existsSync(file)) {
      const partial = `${file}.${process.pid}.part`;
      try {
        await write(partial);
        renameSync(partial, file);
      } finally {
        rmSync(partial, { force: true });
      }
    }
    this.point(buildId);
    if (this.stamp() !== this.pointerStamp) await this.refresh();
  }

  /**
   * Removes environment files other than the current one: left by a build cut off by a crash, or retired by
   * a process that died before deleting them. Call only while no server build runs anywhere: a `drey build`
   * that is still running (its file names its pid) is spared. Returns their names.
   */
  sweep(): string[] {
    // The build the pointer names stays too: in a folder shared with another project, that one's build.
    const keep = new Set([this.currentId, this.named()]);
    const removed: string[] = this.removeLeftovers();
    for (const file of readdirSync(this.dir)) {
      const match = /^([A-Za-z0-9_-]{1,100})\.duckdb$/.exec(file);
      if (!match || keep.has(match[1])) continue;
      const writer = writerOf(file);
      if (writer !== undefined && processAlive(writer)) continue;
      removeDatabaseFiles(join(this.dir, file));
      removed.push(file);
    }
    return removed;
  }

  /**
   * Removes what writers that died left here (see process/leftovers.ts): safe at any time, even while other
   * processes build or fetch into the folder. Returns the names removed.
   */
  removeLeftovers(): string[] {
    const keep = this.currentId === undefined ? undefined : `${this.currentId}.duckdb`;
    const removed = leftoversIn(this.dir, keep);
    for (const name of removed) {
      const path = join(this.dir, name);
      if (name.endsWith('.duckdb')) removeDatabaseFiles(path);
      else rmSync(path, { recursive: true, force: true });
    }
    return removed;
  }

  /** Closes the current environment once its readers are done. */
  close(): void {
    this.current?.closeWhenUnused();
    this.current = undefined;
    this.pointerStamp = '';
  }

  private swap(environment: Environment): void {
    const previous = this.current;
    this.switched(environment);
    this.current = environment;
    if (previous && previous !== environment) previous.retire();
  }

  /** The build id the pointer names, if there is one. */
  private named(): string | undefined {
    try {
      return parsePointer(readFileSync(join(this.dir, POINTER), 'utf8')).buildId || undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The pointer's stamp, read once per turn of the event loop for the requests it serves: a switch that
   * another process made is followed from the next turn, by requests read after it. A cached read asks
   * for it twice (the catalog and the kept response), and under load a turn serves several requests, so a
   * `stat` each is not free (see docs/performance.md, "Figures behind the code", "The build pointer, once
   * a turn"). Switches made here, and following one, read the pointer itself.
   */
  private stampThisTurn(): string {
    if (this.turnStamp === undefined) {
      this.turnStamp = this.stamp();
      setImmediate(() => {
        this.turnStamp = undefined;
      });
    }
    return this.turnStamp;
  }

  private stamp(): string {
    try {
      const stat = statSync(join(this.dir, POINTER));
      return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch {
      return '';
    }
  }

  /** Follows the pointer, which another process switched (callers check); concurrent callers share one. */
  private async refresh(): Promise<void> {
    this.refreshing ??= this.follow().finally(() => {
      this.refreshing = undefined;
      // What was followed is newer than what this turn read.
      this.turnStamp = undefined;
    });
    await this.refreshing;
  }

  private async follow(): Promise<void> {
    // The file named may be deleted between reading the pointer and opening it, when the pointer moved on
    // again meanwhile: then read the pointer once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const stamp = this.stamp();
      const pointer = join(this.dir, POINTER);
      if (!stamp) return;
      const named = parsePointer(readFileSync(pointer, 'utf8'));
      const id = named.buildId;
      if (named.identity !== this.identity) {
        // Another project's build (or one that does not say): what is served stays; a start without
        // anything served builds this project's own (BuildsService).
        this.pointerStamp = stamp;
        if (named.buildId !== this.foreignBuild?.buildId) this.onForeign(named);
        this.foreignBuild = named;
        return;
      }
      this.foreignBuild = undefined;
      if (id === this.current?.id) {
        this.pointerStamp = stamp;
        return;
      }
      const path = this.fileOf(id);
      if (existsSync(path)) {
        try {
          const environment = await Environment.open(id, path, this.limits, this.exportDir);
          this.pointerStamp = stamp;
          this.swap(environment);
          return;
        } catch (error) {
          if (this.stamp() === stamp) throw error;
        }
      } else if (this.stamp() === stamp) {
        // Deleted by hand: keep what is open (or nothing, so that the service builds anew).
        this.pointerStamp = stamp;
        return;
      }
    }
  }
}
