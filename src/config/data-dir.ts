import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '@/config/config';

/** What an older, single-project data folder holds directly (before folders per project). */
const SINGLE_PROJECT_STATE = ['pglite', 'environments', 'secrets.json'];

export interface ProjectDataDir {
  config: AppConfig;
  /**
   * Set when DATA_DIR is not set and the default folder still holds a single project's state of an earlier
   * version (its database, builds, secrets): a sentence that says how to keep using it, for the log.
   */
  earlierState?: string;
}

/**
 * The configuration with the data folder of `projectName`: DATA_DIR as set, or by default
 * `.data/<project name>`, so that a second project served or built from the same checkout (the tutorial's
 * `drey build --project ../shop`) has its own database, builds and secrets instead of replacing the first
 * one's build under it. Resolved once the project is loaded (its name is in project.yml), by the server and
 * the command line alike; calling it again changes nothing.
 */
export function withProjectDataDir(config: AppConfig, projectName: string): ProjectDataDir {
  if (!config.dataDirPerProject) return { config };
  const parent = config.dataDir;
  const dataDir = join(parent, projectName);
  const found = SINGLE_PROJECT_STATE.filter(
    // A project named like one of them has its own folder there: that is not an earlier version's.
    (entry) => entry !== projectName && existsSync(join(parent, entry)),
  );
  return {
    config: { ...config, dataDir, dataDirPerProject: false },
    earlierState:
      found.length > 0
        ? `${parent} holds the state of an earlier version (${found.join(', ')}), which served one ` +
          `project from there; this one keeps ${projectName}'s state in ${dataDir}. To keep using the ` +
          `earlier state (its users, passwords and builds), set DATA_DIR=${parent}`
        : undefined,
  };
}
