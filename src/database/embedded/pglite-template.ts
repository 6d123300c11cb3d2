import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The embedded database's empty cluster, made once by `npm ci` (the `prepare` script runs
 * scripts/pglite-template.js after compiling) and copied into each new DATA_DIR. Creating a PGlite database
 * runs initdb, which is most of a first start's time (several seconds, more on a busy machine); loading this
 * tarball instead takes about as long as opening an existing database. It holds no data, no user and no
 * secret: only what initdb writes. The file is named after the PGlite version, since a cluster is only read by
 * the version that made it; a missing or older one just means initdb runs.
 */
export function pgliteTemplatePath(): string {
  const pglite = require.resolve('@electric-sql/pglite');
  const { version } = JSON.parse(
    readFileSync(join(dirname(pglite), '..', 'package.json'), 'utf8'),
  ) as { version: string };
  return join(__dirname, '..', '..', 'pglite', `empty-cluster-${version}.tar.gz`);
}

/** The template's bytes, or undefined when `npm ci` has not made it for this PGlite version. */
export function readPgliteTemplate(): Buffer | undefined {
  const path = pgliteTemplatePath();
  return existsSync(path) ? readFileSync(path) : undefined;
}

/** Runs initdb in memory and writes the resulting cluster as the template. */
export async function writePgliteTemplate(): Promise<string> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create('memory://');
  try {
    const tarball = await db.dumpDataDir('gzip');
    const path = pgliteTemplatePath();
    mkdirSync(dirname(path), { recursive: true });
    // Written aside, then renamed: an interrupted install leaves no half template.
    writeFileSync(`${path}.partial`, Buffer.from(await tarball.arrayBuffer()));
    renameSync(`${path}.partial`, path);
    return path;
  } finally {
    await db.close();
  }
}
