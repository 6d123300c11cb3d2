import { Decimal } from '@/core/parameters/decimal';
import type { Project } from '@/core/project/project';

/** Written into every snapshot: one written by another shape of {@link Project} is not read. */
const FORMAT = 1;

/**
 * A project as text, to be kept beside the build made from it: when the folder no longer loads (or its SQL
 * no longer plans) at the next start, the service serves that build with the project it was built from,
 * as a running server does after a failed build. The project is read back for the folder configured then;
 * the folder it was read from is kept beside it (`from`), to find it by when project.yml does not say its
 * name any more. Exact decimals (parameter bounds) are tagged, since JSON would make
 * them strings.
 */
export function projectSnapshot(project: Project): string {
  const { dir, ...rest } = project;
  return JSON.stringify(
    { format: FORMAT, from: dir, project: rest },
    function (this: unknown, key, value) {
      const original = (this as Record<string, unknown>)[key];
      return original instanceof Decimal ? { $decimal: original.toString() } : (value as unknown);
    },
  );
}

/** The project of a {@link projectSnapshot}, as served from `dir`; undefined when the text is not one. */
export function readProjectSnapshot(text: string, dir: string): Project | undefined {
  return readSnapshot(text, dir)?.project;
}

/** A {@link projectSnapshot}'s project, as served from `dir`, and the folder it was read from. */
export function readSnapshot(
  text: string,
  dir: string,
): { project: Project; from?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_key, value: unknown) => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const tagged = value as Record<string, unknown>;
        const keys = Object.keys(tagged);
        if (keys.length === 1 && typeof tagged.$decimal === 'string') {
          return Decimal.parse(tagged.$decimal) ?? value;
        }
      }
      return value;
    });
  } catch {
    return undefined;
  }
  const snapshot = parsed as {
    format?: unknown;
    from?: unknown;
    project?: Omit<Project, 'dir'>;
  } | null;
  if (snapshot?.format !== FORMAT || typeof snapshot.project?.name !== 'string') return undefined;
  return {
    project: { ...snapshot.project, dir },
    from: typeof snapshot.from === 'string' ? snapshot.from : undefined,
  };
}
