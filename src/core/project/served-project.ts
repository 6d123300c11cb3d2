import type { Project } from '@/core/project/project';

/**
 * The project being served. A build reads the project folder again and, when it succeeds, replaces the
 * project here in the same step as the environment built from it (`EnvironmentManager`), so that a request
 * reads the new SQL, parameters and templates together with the new tables. Services read `current` when
 * they need it, never keep it. What names the API (the project's name and major version, hence its paths)
 * is read once at start: a build that changes them is refused.
 */
export class ServedProject {
  constructor(private project: Project) {}

  get current(): Project {
    return this.project;
  }

  replace(project: Project): void {
    this.project = project;
  }
}
