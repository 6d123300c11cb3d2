import { NotFoundError } from '@/core/errors';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';

export type ItemKind = 'dataset' | 'dashboard';
export type Item<K extends ItemKind> = K extends 'dataset' ? DatasetSpec : DashboardSpec;

// The legacy layout accepts hyphens for underscores in item names.
function normalise(name: string, legacy: boolean): string {
  return legacy ? name.replace(/-/g, '_') : name;
}

/** A dataset or dashboard by its configured name; 404 `not_found` otherwise. */
export function findItem<K extends ItemKind>(
  project: Project,
  kind: K,
  name: string,
  legacy = false,
): Item<K> {
  const wanted = normalise(name, legacy);
  const list: (DatasetSpec | DashboardSpec)[] =
    kind === 'dataset' ? project.datasets : project.dashboards;
  const item = list.find((candidate) => candidate.name === wanted);
  if (!item) throw new NotFoundError(`No ${kind} named "${name}"`);
  return item as Item<K>;
}
