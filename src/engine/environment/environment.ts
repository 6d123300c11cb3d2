import type { Project } from '@/core/project/project';
import { rmSync } from 'node:fs';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { EngineLimits, openDuckdb } from '@/engine/duckdb/duckdb-instance';

/**
 * How every environment is opened for reading: requests cannot write, cannot read files or the network
 * (`read_csv('/etc/passwd')`, `ATTACH`, `INSTALL`, `COPY ... TO`), and cannot turn that back on
 * ({@link openDuckdb} locks the configuration once the engine's limits are set).
 */
export const READ_ONLY_OPTIONS: Record<string, string> = {
  access_mode: 'READ_ONLY',
  enable_external_access: 'false',
};

/** Removes a database file with the files DuckDB keeps beside it. */
export function removeDatabaseFiles(path: string): void {
  // `.project.json`: the project the build serves (EnvironmentManager.keepProject).
  for (const file of [path, `${path}.wal`, `${path}.tmp`, `${path}.project.json`]) {
    rmSync(file, { recursive: true, force: true });
  }
}

/**
 * Idle connections an environment keeps for the next query ({@link Environment.withConnection}): as many
 * as the queries that run at once, which the driver's thread pool (4 threads) bounds, with room for those
 * waiting on it. An idle connection is a client context without a query, a few KB.
 */
const IDLE_CONNECTIONS = 16;

/** A reader's hold on an environment; `release()` may be called more than once. */
export interface Lease {
  readonly environment: Environment;
  release(): void;
}

/**
 * One built DuckDB file, open read-only, counting its readers. Once retired (replaced by a newer build), it
 * is closed and its file deleted when the last reader releases it.
 */
export class Environment {
  private readers = 0;
  private retired = false;
  private deleteWhenUnused = false;
  private closed = false;
  private readonly idle: DuckDBConnection[] = [];
  /**
   * The project this environment was built from and is served with: set by the build that made it, or, for
   * a build another process made, read from the project folder when this process follows it.
   */
  project?: Project;
  /** What {@link Engine.missingTables} found in it, once asked: it does not change, the file is read-only. */
  missingTables?: Promise<string[]>;

  private constructor(
    readonly id: string,
    readonly path: string,
    private readonly instance: DuckDBInstance,
  ) {}

  /**
   * @param exportDir the only folder its connections may write, with `COPY ... TO` (exports); without it
   * no file at all ({@link READ_ONLY_OPTIONS}).
   */
  static async open(
    id: string,
    path: string,
    limits: EngineLimits,
    exportDir?: string,
  ): Promise<Environment> {
    const instance =
      exportDir === undefined
        ? await openDuckdb(path, READ_ONLY_OPTIONS, limits)
        : await openDuckdb(path, { access_mode: 'READ_ONLY' }, limits, exportDir);
    return new Environment(id, path, instance);
  }

  get readerCount(): number {
    return this.readers;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  acquire(): Lease {
    if (this.closed) throw new Error(`environment ${this.id} is closed`);
    this.readers++;
    let held = true;
    return {
      environment: this,
      release: () => {
        if (!held) return;
        held = false;
        this.readers--;
        if (this.retired && this.readers === 0) this.dispose();
      },
    };
  }

  /** A connection for one query; the caller closes it. */
  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /**
   * Runs `work` on a connection kept from an earlier query, or a new one: opening a connection is a task of
   * the driver's thread pool, which under load waits behind the queries its threads run. For the
   * project's own statements only (a dataset's query, its count, a page of it, a parameter's options),
   * which are SELECTs on a database whose configuration is locked: nothing of a caller stays on the
   * connection. It is kept only when `work` succeeded and `clean` says it left no query open (a streamed
   * result read only in part holds its query, and the memory it took, until the connection's next
   * statement); a failure (an error, the time limit's interrupt) closes it.
   */
  async withConnection<T>(
    work: (connection: DuckDBConnection) => Promise<T>,
    clean: (value: T) => boolean = () => true,
  ): Promise<T> {
    const connection = this.idle.pop() ?? (await this.instance.connect());
    let keep = false;
    try {
      const value = await work(connection);
      keep = clean(value);
      return value;
    } finally {
      if (keep && !this.closed && this.idle.length < IDLE_CONNECTIONS) this.idle.push(connection);
      else connection.closeSync();
    }
  }

  /** Connections kept idle now, for tests. */
  get idleConnections(): number {
    return this.idle.length;
  }

  /** A newer environment took over: closed and deleted as soon as no reader holds it. */
  retire(): void {
    this.deleteWhenUnused = true;
    this.closeWhenUnused();
  }

  /** Closes without deleting (shutdown, or a build abandoned before it was switched in). */
  closeWhenUnused(): void {
    this.retired = true;
    if (this.readers === 0) this.dispose();
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.closeSync();
    this.instance.closeSync();
    // Another server process sharing the data folder may have deleted it first: force ignores that.
    if (this.deleteWhenUnused) removeDatabaseFiles(this.path);
  }
}
