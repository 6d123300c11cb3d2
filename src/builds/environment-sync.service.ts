import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { JsonLogger } from '@/runtime/json-logger';
import { Database } from '@/database/database';
import { EnvironmentStore } from '@/database/environment-store';
import { Engine } from '@/engine/engine';

/** How often a replica asks the store for a newer build: the bar is "served everywhere within 2 s". */
const POLL_MS = 500;

/**
 * Built environments reach every replica through the database, not a shared folder: the process that
 * built publishes the file ({@link publish}); every process asks the store for its project's newest build
 * twice a second and at start ({@link catchUp}), fetches one it does not have into its own DATA_DIR, checks
 * its size and checksum, and switches to it. DATA_DIR is then a cache a replica may lose. With the embedded
 * database (one process) there is no one to share with, and nothing is stored.
 */
@Injectable()
export class EnvironmentSync implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  /** Builds running in this process (one at most: the queue runs one at a time everywhere). */
  private building = 0;
  private readonly enabled: boolean;
  /** The last failure logged, so that a store that stays down is one warning, not two a second. */
  private lastFailure?: string;

  constructor(
    private readonly store: EnvironmentStore,
    private readonly engine: Engine,
    private readonly logger: JsonLogger,
    database: Database,
  ) {
    this.enabled = database.kind === 'postgres';
  }

  /** The project whose builds this process publishes and fetches, `expenses v1`. */
  private get identity(): string {
    return this.engine.environments.identity;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.enabled) return;
    this.timer = setInterval(() => void this.catchUp(), POLL_MS);
    this.timer.unref();
    // Never fetched (the store is asked for this project's builds only), but worth a word: one Postgres for
    // two projects also means one set of users, tokens and build history.
    const others = await this.store.otherProjects(this.identity).catch(() => []);
    if (others.length > 0) {
      this.logger.emit('warn', 'the database stores builds of other projects', {
        serves: this.identity,
        others,
        hint: 'their builds are never served here; give each project its own DATABASE_URL',
      });
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** After a build here: the file goes to the store, and older builds leave it (the current and one more stay). */
  async publish(buildId: string, file: string): Promise<void> {
    if (!this.enabled) return;
    const started = Date.now();
    try {
      const stored = await this.store.publish(buildId, file, this.identity);
      const pruned = await this.store.prune(this.identity, 2);
      this.logger.emit('info', 'environment published', {
        buildId,
        bytes: stored.size,
        ms: Date.now() - started,
        pruned: pruned.length,
      });
    } catch (error) {
      // The build serves here; the other replicas go on with the previous one until a build publishes.
      this.logger.emit('error', 'environment not published', {
        buildId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * Runs a build of this process. Meanwhile the store is not followed: the build is switched to here
   * before it is published, and until then the store names the previous build, which following would
   * switch back to (serving the old data for up to a poll after the build is said done).
   */
  async whileBuilding<T>(build: () => Promise<T>): Promise<T> {
    this.building += 1;
    try {
      return await build();
    } finally {
      this.building -= 1;
    }
  }

  /** Fetches and switches to the current build when this process does not serve it; one at a time. */
  catchUp(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.syncing ??= this.follow().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async follow(): Promise<void> {
    if (this.building > 0) return;
    try {
      const current = await this.store.current(this.identity);
      if (this.building > 0) return;
      if (!current || current.buildId === this.engine.environments.currentId) return;
      const started = Date.now();
      await this.engine.environments.adopt(current.buildId, (path) =>
        this.store.fetch(current, path),
      );
      this.lastFailure = undefined;
      this.logger.emit('info', 'environment fetched', {
        buildId: current.buildId,
        bytes: current.size,
        ms: Date.now() - started,
      });
    } catch (error) {
      // Retried on the next tick: a store that is down, or a file whose checksum did not match.
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.lastFailure)
        this.logger.emit('warn', 'environment not fetched', { error: message });
      this.lastFailure = message;
    }
  }
}
