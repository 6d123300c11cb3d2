import {
  Origin,
  ParameterDefinition,
  ProblemSink,
  report,
} from '@/core/parameters/parameter-definition';
import { shown } from '@/core/parameters/raw-values';

/** Checks across parameters: parents, and the option ids that children and defaults refer to. */

/** Every parent exists and is a select; parents form no cycle. */
export function checkParents(defs: ParameterDefinition[], sink: ProblemSink): void {
  const byName = new Map(defs.map((def) => [def.name, def]));
  for (const def of defs) {
    if (def.parent === null) continue;
    const parent = byName.get(def.parent);
    if (parent === undefined) {
      sink.problems.add(
        sink.file,
        `${def.at}.parent`,
        `${shown(def.parent)} is not a parameter of the project`,
      );
    } else if (parent.kind !== 'select') {
      sink.problems.add(
        sink.file,
        `${def.at}.parent`,
        `"${parent.name}" is a ${parent.widget} parameter; a parent must be a single_select or multi_select`,
      );
    }
  }
  const reported = new Set<string>();
  for (const def of defs) {
    const chain = [def.name];
    let current = def.parent === null ? undefined : byName.get(def.parent);
    while (current !== undefined && !chain.includes(current.name)) {
      chain.push(current.name);
      current = current.parent === null ? undefined : byName.get(current.parent);
    }
    if (current === undefined || current.name !== def.name || reported.has(def.name)) continue;
    chain.forEach((name) => reported.add(name));
    sink.problems.add(
      sink.file,
      `${def.at}.parent`,
      `parents form a cycle: ${[...chain, def.name].join(' -> ')}`,
    );
  }
}

/**
 * Option ids that refer to options: a child's `parent_option_ids` (options and variants) and a select's
 * `default`. Written-out options are checked at start-up (`parse`); anything that involves a query's
 * options is checked once the build has run the queries (`resolve`), so nothing is checked twice.
 */
export function checkOptionReferences(
  defs: ParameterDefinition[],
  sink: ProblemSink,
  phase: 'parse' | 'resolve',
): void {
  const byName = new Map(defs.map((def) => [def.name, def]));
  const written = (def: ParameterDefinition) => def.kind === 'value' || def.optionsSql === null;
  const due = (fromFileOnly: boolean) => (phase === 'parse') === fromFileOnly;

  for (const def of defs) {
    if (def.kind === 'select' && def.defaultIds !== null && due(written(def))) {
      const ids = new Set(def.options.map((option) => option.id));
      for (const id of def.defaultIds.filter((id) => !ids.has(id))) {
        sink.problems.add(sink.file, `${def.at}.default`, `${shown(id)} is not an option id`);
      }
    }
    const parent = def.parent === null ? undefined : byName.get(def.parent);
    if (parent?.kind !== 'select' || !due(written(def) && written(parent))) continue;
    const parentIds = new Set(parent.options.map((option) => option.id));
    const check = (ids: string[] | null, origin: Origin) => {
      for (const id of (ids ?? []).filter((id) => !parentIds.has(id))) {
        report(
          sink,
          origin,
          'parent_option_ids',
          `${shown(id)} is not an option id of "${parent.name}"`,
        );
      }
    };
    if (def.kind === 'select')
      def.options.forEach((option) => check(option.parentOptionIds, option.origin));
    else def.variants.forEach((variant) => check(variant.parentOptionIds, variant.origin));
  }
}
