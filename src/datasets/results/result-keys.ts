import { createHash } from 'node:crypto';
import type { ResultOptions } from '@/datasets/results/result-options';
import type { CallerReads } from '@/engine/query/model-reads';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { deepFreeze } from '@/core/parameters/kept-selections';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';

/**
 * The canonical form and key text of selections a catalog keeps (frozen, the same objects for every request
 * that asks the same): each is worked out once, not per request. Both are made of the selections alone.
 */
const canonicalOf = new WeakMap<SelectionValues, SelectionValues>();
const keyTextOf = new WeakMap<SelectionValues, string>();

/**
 * Selections in one canonical form for the same request however it was written: a multi-select whose
 * parameter says order does not matter is sorted by option id. The query runs with these very selections,
 * so a key always describes exactly the statement that produced its value.
 */
export function canonicalSelections(
  catalog: ParameterCatalog,
  selections: SelectionValues,
): SelectionValues {
  const known = canonicalOf.get(selections);
  if (known) return known;
  const canonical: SelectionValues = {};
  for (const [name, selection] of Object.entries(selections)) {
    const definition = catalog.definition(name);
    const unordered = definition?.kind === 'select' && !definition.orderMatters;
    canonical[name] =
      selection.widget === 'multi_select' && unordered
        ? {
            widget: 'multi_select',
            selected: [...selection.selected].sort((a, b) =>
              a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
            ),
          }
        : selection;
  }
  // Kept selections (frozen, see KeptSelections) come back for every request that asks the same.
  if (Object.isFrozen(selections)) {
    deepFreeze(canonical);
    canonicalOf.set(selections, canonical);
  }
  return canonical;
}

/**
 * The values of the caller that a model's templates read, by the names templates use; null when they read
 * none, so that every caller shares one result.
 */
export function callerParts(view: CallerView, reads: CallerReads): object | null {
  const valueOf = (name: string): unknown =>
    name === 'username'
      ? view.username
      : name === 'is_admin'
        ? view.isAdmin
        : (view.fields[name] ?? null);
  if (reads === 'all') {
    const fields = Object.keys(view.fields).sort();
    return {
      username: view.username,
      is_admin: view.isAdmin,
      fields: fields.map((name) => [name, view.fields[name]]),
    };
  }
  if (reads.length === 0) return null;
  return Object.fromEntries(reads.map((name) => [name, valueOf(name)]));
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/**
 * What a dataset's whole result depends on, as text: the build it is computed on, the dataset, its
 * canonical selections and the caller parts its model reads. Whatever else differs between two requests
 * cannot change the rows. Plain text, not a digest, so that a request answered from memory hashes nothing.
 */
export function resultKeyText(
  buildId: string,
  dataset: string,
  selections: SelectionValues,
  caller: object | null,
): string {
  let text = keyTextOf.get(selections);
  if (text === undefined) {
    const names = Object.keys(selections).sort();
    text = JSON.stringify(names.map((name) => [name, selections[name]]));
    if (Object.isFrozen(selections)) keyTextOf.set(selections, text);
  }
  // As JSON.stringify([<the selections' pairs>, caller]) writes it.
  return `${buildId}\u0000${dataset}\u0000[${text},${JSON.stringify(caller)}]`;
}

/** Digests of key texts already worked out, so that a read answered from memory hashes nothing. */
const digests = new Map<string, string>();
/** Key texts whose digests are kept; past that the map starts again (a build makes every key new). */
const DIGESTS_KEPT = 4096;

/** The compact key of a result in the shared store: `<build>:<dataset>:<digest of the key text>`. */
export function storeKey(buildId: string, dataset: string, keyText: string): string {
  let digested = digests.get(keyText);
  if (digested === undefined) {
    if (digests.size >= DIGESTS_KEPT) digests.clear();
    digested = digest(keyText);
    digests.set(keyText, digested);
  }
  return `${buildId}:${dataset}:${digested}`;
}

/** The key of one serialised response made from a result: its shape, page, columns and orientation. */
export function pageKey(keyText: string, shape: string, options: ResultOptions | null): string {
  return `${keyText}\u0000${shape}\u0000${JSON.stringify(options)}`;
}

/** A strong ETag for a serialised response: the same key always yields the same bytes. */
export function etagOf(pageKey: string): string {
  return `"${createHash('sha1').update(pageKey).digest('base64url')}"`;
}
