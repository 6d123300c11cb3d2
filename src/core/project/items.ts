import type { Caller } from '@/core/caller';
import { NotFoundError } from '@/core/errors';
import { listSome } from '@/core/listing';
import { shown } from '@/core/parameters/raw-values';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';
import { canOpenItem } from '@/core/project/scope';

export type ItemKind = 'dataset' | 'dashboard';
export type Item<K extends ItemKind> = K extends 'dataset' ? DatasetSpec : DashboardSpec;

/**
 * A dataset or dashboard by its configured name; 404 `not_found` otherwise, naming the items of that kind
 * the caller may open (as their catalog lists them: never one they may not open), so that a typo is seen.
 */
export function findItem<K extends ItemKind>(
  project: Project,
  kind: K,
  name: string,
  caller: Caller,
): Item<K> {
  const list: (DatasetSpec | DashboardSpec)[] =
    kind === 'dataset' ? project.datasets : project.dashboards;
  const item = list.find((candidate) => candidate.name === name);
  if (caller.embed) {
    // An embedding token opens its item; any other is as if it did not exist.
    if (item && canOpenItem(kind, item, caller)) return item as Item<K>;
    throw new NotFoundError(`No ${kind} named ${shown(name)}`);
  }
  if (item) return item as Item<K>;
  const open = list.filter((candidate) => canOpenItem(kind, candidate, caller));
  throw new NotFoundError(
    `No ${kind} named ${shown(name)}; ` +
      (open.length === 0
        ? `you can open no ${kind}`
        : `the ${kind}s you can open are ${listSome(open.map((candidate) => candidate.name))}`),
  );
}
