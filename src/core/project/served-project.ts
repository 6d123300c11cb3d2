import type { Project } from '@/core/project/project';

/**
 * The project being served. A build reads the project folder again and, when it succeeds, replaces the
 * project here in the same step as the environment built from it (`EnvironmentManager`), so that a request
 * reads the new SQL, parameters and templates together with the new tables. So the project is read per
 * use, never kept: services and controllers write `this.served.current` where they need it (no field, no
 * getter of their own that a reader must look up), and a method that awaits between two reads may see two
 * projects. What names the API (the project's name and major version, hence its paths) is read once at
 * start: a build that changes them is refused.
 */
export class ServedProject {
  private readonly listeners = new Set<(project: Project) => void>();

  constructor(private project: Project) {}

  get current(): Project {
    return this.project;
  }

  replace(project: Project): void {
    const changed = project !== this.project;
    this.project = project;
    if (changed) for (const listener of this.listeners) listener(project);
  }

  /**
   * Called with the new project whenever a build (this process's, or another's once followed) replaces it:
   * what is told of a change (the MCP server's `listChanged`) listens here. Returns the unsubscribe.
   */
  onReplace(listener: (project: Project) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
