import { NotFoundError } from '@/core/errors';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';

export type ItemKind = 'dataset' | 'dashboard';
export type Item<K extends ItemKind> = K extends 'dataset' ? DatasetSpec : DashboardSpec;

/** A dataset or dashboard by its configured name; 404 `not_found` otherwise. */
export function findItem<K extends ItemKind>(project: Project, kind: K, name: string): Item<K> {
  const list: (DatasetSpec | DashboardSpec)[] =
    kind === 'dataset' ? project.datasets : project.dashboards;
  const item = list.find((candidate) => candidate.name === name);
  if (!item) throw new NotFoundError(`No ${kind} named "${name}"`);
  return item as Item<K>;
}
