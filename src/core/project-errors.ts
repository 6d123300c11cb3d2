/** One problem in a project file: the file, the path inside it, and what is wrong. */
export interface ProjectProblem {
  file: string;
  path: string;
  message: string;
}

/** Thrown when a project is invalid; carries every problem found, not only the first. */
export class ProjectError extends Error {
  constructor(readonly problems: ProjectProblem[]) {
    super(
      `The project is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems
          .map((p) => `  ${p.file}${p.path ? ` at ${p.path}` : ''}: ${indented(p.message)}`)
          .join('\n'),
    );
  }
}

/** A problem as one line (of the log): the file, where in it, and what is wrong. */
export function describeProblem(problem: ProjectProblem): string {
  return `${problem.file}${problem.path ? ` at ${problem.path}` : ''}: ${problem.message}`;
}

/** Collects problems while a file is checked, so that all of them are reported at once. */
export class Problems {
  readonly list: ProjectProblem[] = [];
  /**
   * Files that did not parse: what they define is missing, and a problem about what refers to it would only
   * repeat theirs.
   */
  readonly unparsed = new Set<string>();

  add(file: string, path: string, message: string): void {
    this.list.push({ file, path, message });
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw new ProjectError(this.list);
  }
}

/** A message of several lines (an engine's, with its hints) under its problem's line. */
function indented(message: string): string {
  return message
    .split('\n')
    .filter((line) => line.trim() !== '')
    .join('\n      ');
}
