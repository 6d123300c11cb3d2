import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { DataSource } from 'typeorm';

/** A published environment: its build, size and SHA-256, and the project it was built from. */
export interface StoredEnvironment {
  buildId: string;
  size: number;
  sha256: string;
  /** The project's identity, `expenses v1` (see `projectIdentity`). */
  project: string;
}

/** Bytes per stored chunk: a row small enough for Postgres, large enough to keep the rows few. */
const CHUNK_BYTES = 8 * 1024 * 1024;

/** The checksum or size of a fetched file is not the published one: the file is not used. */
export class EnvironmentIntegrityError extends Error {}

/**
 * Built environments in Postgres, which every replica already has, so that replicas need no shared folder:
 * the builder publishes each successful build's file; the others fetch it into their own DATA_DIR, check it
 * and switch to it. The newest published build of a project is that project's current one: replicas of
 * different projects sharing one Postgres never see each other's builds. Files are streamed in chunks of 8 MB
 * (rows of `bytea`), never held whole in memory. An object store (S3) could implement the same methods.
 */
@Injectable()
export class EnvironmentStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores the file of a build of `project` and makes it that project's current one. */
  async publish(buildId: string, file: string, project: string): Promise<StoredEnvironment> {
    const hash = createHash('sha256');
    let size = 0;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query('DELETE FROM "environment_chunks" WHERE "build_id" = $1', [buildId]);
      let seq = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
        const bytes = chunk as Buffer;
        hash.update(bytes);
        size += bytes.length;
        await runner.query(
          'INSERT INTO "environment_chunks" ("build_id", "seq", "data") VALUES ($1, $2, $3)',
          [buildId, seq++, bytes],
        );
      }
      const sha256 = hash.digest('hex');
      // The row is written last, in the same transaction: a replica never sees a build without its bytes.
      await runner.query(
        `INSERT INTO "environment_files" ("build_id", "size", "sha256", "project") VALUES ($1, $2, $3, $4)
         ON CONFLICT ("build_id") DO UPDATE SET "size" = $2, "sha256" = $3, "project" = $4,
           "published_at" = now()`,
        [buildId, size, sha256, project],
      );
      await runner.commitTransaction();
      return { buildId, size, sha256, project };
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
  }

  /** The build every replica of `project` should serve: the newest published one of that project. */
  async current(project: string): Promise<StoredEnvironment | null> {
    const rows = await this.dataSource.query<{ build_id: string; size: string; sha256: string }[]>(
      `SELECT "build_id", "size", "sha256" FROM "environment_files" WHERE "project" = $1
       ORDER BY "published_at" DESC, "build_id" DESC LIMIT 1`,
      [project],
    );
    const [row] = rows;
    return row
      ? { buildId: row.build_id, size: Number(row.size), sha256: row.sha256, project }
      : null;
  }

  /** The other projects that have builds here: a Postgres shared by mistake, which the log says. */
  async otherProjects(project: string): Promise<string[]> {
    const rows = await this.dataSource.query<{ project: string }[]>(
      `SELECT DISTINCT "project" FROM "environment_files"
       WHERE "project" IS NOT NULL AND "project" <> $1 ORDER BY "project"`,
      [project],
    );
    return rows.map((row) => row.project);
  }

  /**
   * Writes a stored build's bytes to `path`, chunk by chunk; rejects when size or checksum differ, or when
   * the file cannot be written (a full disk): through `pipeline`, so a write error rejects here instead of
   * being an unhandled 'error' event that ends the process (seen in the fault drill, `npm run faults`).
   */
  async fetch(stored: StoredEnvironment, path: string): Promise<void> {
    const hash = createHash('sha256');
    let size = 0;
    const dataSource = this.dataSource;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let seq = 0; ; seq++) {
        const rows = await dataSource.query<{ data: Buffer }[]>(
          'SELECT "data" FROM "environment_chunks" WHERE "build_id" = $1 AND "seq" = $2',
          [stored.buildId, seq],
        );
        if (rows.length === 0) return;
        const bytes = rows[0].data;
        hash.update(bytes);
        size += bytes.length;
        yield bytes;
      }
    }
    await pipeline(chunks, createWriteStream(path));
    const sha256 = hash.digest('hex');
    if (size !== stored.size || sha256 !== stored.sha256) {
      throw new EnvironmentIntegrityError(
        `build ${stored.buildId}: fetched ${size} bytes with SHA-256 ${sha256}, published ${stored.size} bytes with ${stored.sha256}`,
      );
    }
  }

  /**
   * Deletes all but the `keep` newest published builds of `project`, and the builds stored before builds
   * recorded their project (no replica fetches those any more) that are older than the ones kept. Other
   * projects' builds are theirs to prune. A replica still fetching an older one fails its checksum and
   * fetches the current one on its next try.
   */
  async prune(project: string, keep = 2): Promise<string[]> {
    const rows = await this.dataSource.query<
      [{ build_id: string }[], number] | { build_id: string }[]
    >(
      `WITH "kept" AS (
         SELECT "build_id", "published_at" FROM "environment_files" WHERE "project" = $1
         ORDER BY "published_at" DESC, "build_id" DESC LIMIT $2
       )
       DELETE FROM "environment_files" WHERE
         ("project" = $1 AND "build_id" NOT IN (SELECT "build_id" FROM "kept"))
         OR ("project" IS NULL AND "published_at" < (SELECT min("published_at") FROM "kept"))
       RETURNING "build_id"`,
      [project, keep],
    );
    const deleted = (Array.isArray(rows[0]) ? rows[0] : rows) as { build_id: string }[];
    const ids = deleted.map((row) => row.build_id);
    if (ids.length > 0) {
      await this.dataSource.query('DELETE FROM "environment_chunks" WHERE "build_id" = ANY($1)', [
        ids,
      ]);
    }
    return ids;
  }
}
