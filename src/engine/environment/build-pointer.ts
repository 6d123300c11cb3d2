import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Project } from '@/core/project/project';
import { readSnapshot } from '@/core/project/project-snapshot';

// What a data folder's `environments` holds, readable without opening DuckDB (main.ts reads it before the
// engine's modules load): the pointer to the build served, and the project kept beside each build.

export const POINTER = 'current';
const BUILD_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * Which project a build belongs to: its name and major version, e.g. `expenses v1`. Both, because together
 * they name the API's paths and are what a build may not change while served (`BuildRunner` refuses a build
 * that changes them): a build of the same name at another major version is made for other paths and, by
 * the meaning of a major version, other tables, so a process never serves it either; a build of the same
 * project after a minor edit is the normal case and is followed. Not the folder: replicas load the same
 * project from different paths.
 */
export function projectIdentity(project: { name: string; majorVersion: number }): string {
  return `${project.name} v${project.majorVersion}`;
}

/** A build the pointer names that this manager does not serve, because another project made it. */
export interface ForeignBuild {
  buildId: string;
  /** Its project's identity; undefined for a pointer written before builds recorded it. */
  identity?: string;
}

/** The pointer's text: the build id, then its project's identity (a pointer of one line has none). */
export function parsePointer(text: string): ForeignBuild {
  const [buildId = '', identity] = text.split('\n').map((line) => line.trim());
  return { buildId, identity: identity || undefined };
}

export function checkBuildId(buildId: string): void {
  if (!BUILD_ID.test(buildId)) {
    throw new Error(`build id "${buildId}" must be 1-100 letters, digits, _ or -`);
  }
}

/** Where the project a build serves is kept: beside its file, removed with it (`removeDatabaseFiles`). */
export function snapshotFile(databaseFile: string): string {
  return `${databaseFile}.project.json`;
}

export function keptProjectOf(databaseFile: string, projectDir: string): Project | undefined {
  return keptOf(databaseFile, projectDir)?.project;
}

function keptOf(
  databaseFile: string,
  projectDir: string,
): { project: Project; from?: string } | undefined {
  try {
    return readSnapshot(readFileSync(snapshotFile(databaseFile), 'utf8'), projectDir);
  } catch {
    return undefined;
  }
}

/**
 * The build the data folder serves and the project kept beside it, read before anything starts (the start
 * of a server whose project folder no longer loads): undefined when there is no build, or none that kept
 * its project, or it is another project's. `name`: the project's name, when project.yml still says it;
 * without it, only a project kept from this very folder is taken.
 */
export function lastGoodBuild(
  dataDir: string,
  projectDir: string,
  name?: string,
): { buildId: string; project: Project } | undefined {
  const dir = join(dataDir, 'environments');
  let pointer: ForeignBuild;
  try {
    pointer = parsePointer(readFileSync(join(dir, POINTER), 'utf8'));
    checkBuildId(pointer.buildId);
  } catch {
    return undefined;
  }
  const databaseFile = join(dir, `${pointer.buildId}.duckdb`);
  if (!existsSync(databaseFile)) return undefined;
  const kept = keptOf(databaseFile, projectDir);
  if (!kept || pointer.identity !== projectIdentity(kept.project)) return undefined;
  if (name === undefined ? kept.from !== resolve(projectDir) : kept.project.name !== name) {
    return undefined;
  }
  return { buildId: pointer.buildId, project: kept.project };
}
