import type { UserField } from '@/project/user-fields';

/** The data project as the service uses it, after validation. */
export interface Project {
  /** Absolute path of the project folder. */
  dir: string;
  name: string;
  label: string;
  description: string;
  majorVersion: number;
  /** Project-defined user attributes, in manifest order. */
  userFields: UserField[];
}

/** `{version}` of the current layout: `v{major_version}`. */
export function projectVersion(project: Pick<Project, 'majorVersion'>): string {
  return `v${project.majorVersion}`;
}
