import { Evaluation, evaluate } from '@/core/parameters/cascade';
import { KeptSelections } from '@/core/parameters/kept-selections';
import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { InvalidRequestError } from '@/core/errors';
import { closestName } from '@/core/did-you-mean';
import { UnknownParameterError } from '@/core/parameters/parameter-errors';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import { WidgetJson, toSelectionValue, toWidgetJson } from '@/core/parameters/widget-json';

/**
 * The project's parameters with their options, bounds and defaults complete (after the build's queries).
 * Immutable: each build makes a new catalog, so a request evaluates against one consistent version.
 */
export class ParameterCatalog {
  private readonly definitions: readonly ParameterDefinition[];
  private readonly byName: ReadonlyMap<string, ParameterDefinition>;
  /** Parents before their children; otherwise the project's order. */
  private readonly order: readonly ParameterDefinition[];
  private readonly childrenOf: ReadonlyMap<string, readonly string[]>;
  private readonly kept: KeptSelections;

  constructor(definitions: readonly ParameterDefinition[]) {
    this.definitions = Object.freeze([...definitions]);
    this.byName = new Map(definitions.map((def) => [def.name, def]));
    const children = new Map<string, string[]>();
    for (const def of definitions) {
      if (def.parent !== null)
        children.set(def.parent, [...(children.get(def.parent) ?? []), def.name]);
    }
    this.childrenOf = children;
    this.order = this.parentsFirst();
    const groupFields = definitions.flatMap((def) =>
      def.kind === 'select' && def.userGroupField !== null ? [def.userGroupField.name] : [],
    );
    this.kept = new KeptSelections([...new Set(groupFields)]);
  }

  /** Every parameter name, in the project's order (`P/parameters`). */
  names(): string[] {
    return this.definitions.map((def) => def.name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  definition(name: string): ParameterDefinition | undefined {
    return this.byName.get(name);
  }

  /**
   * The widgets of a parameters endpoint whose parameters are `names` (in that order). A refresh (with
   * `x_parent_param`, or exactly one selection) answers the trigger and its descendants only, so the
   * client keeps what the user chose in the others.
   */
  widgets(names: readonly string[], request: ParameterRequest, caller: CallerView): WidgetJson[] {
    const own = new Set(names);
    // The document lists the endpoint's own names as x_parent_param's values: another is a client's mistake,
    // not a refresh of everything.
    if (request.parentParam !== null && !own.has(request.parentParam)) {
      throw new InvalidRequestError(
        `x_parent_param "${request.parentParam}" is not a parameter of this endpoint; ${accepts(names)}`,
      );
    }
    const evaluation = this.evaluate(names, request, caller);
    const parent = request.parentParam;
    const sent = evaluation.applied.filter((name) => !request.injected?.has(name));
    const trigger = parent ?? (sent.length === 1 ? sent[0] : null);
    const listed = trigger === null ? own : new Set([trigger, ...this.descendants(trigger)]);
    return names
      .filter((name) => listed.has(name))
      .map((name) =>
        toWidgetJson(this.get(name), evaluation.values.get(name)!, this.childrenOf.has(name)),
      );
  }

  /**
   * The validated selections of `names`, defaults applied, as the SQL engine binds them: frozen, and the
   * same objects for the same request and caller (see {@link KeptSelections}).
   */
  selections(
    names: readonly string[],
    request: ParameterRequest,
    caller: CallerView,
  ): SelectionValues {
    const key = this.kept.keyOf(names, request, caller);
    const kept = this.kept.get(key);
    if (kept) return kept;
    const evaluation = this.evaluate(names, request, caller);
    return this.kept.keep(
      key,
      Object.fromEntries(
        names.map((name) => [name, toSelectionValue(evaluation.values.get(name)!)]),
      ),
    );
  }

  private evaluate(
    names: readonly string[],
    request: ParameterRequest,
    caller: CallerView,
  ): Evaluation {
    names.forEach((name) => this.get(name));
    const own = new Set(names);
    if (request.verifyParams) {
      const accepted = accepts(names);
      const given = [...request.selections.keys()];
      if (request.parentParam !== null) given.push(request.parentParam);
      const unknown = given.find((name) => !own.has(name));
      if (unknown !== undefined) {
        throw new UnknownParameterError(
          `Unknown parameter "${unknown}" for this endpoint${meant(unknown, names)}; ${accepted}`,
        );
      }
    }
    const evaluation = evaluate(this.order, own, request, caller);
    if (request.verifyParams && evaluation.ignored.length > 0) {
      throw new UnknownParameterError(
        `Parameter "${evaluation.ignored[0]}" is disabled for the current selections and takes no value`,
      );
    }
    return evaluation;
  }

  private get(name: string): ParameterDefinition {
    const def = this.byName.get(name);
    // Datasets and dashboards are checked against the catalog when the project loads.
    if (def === undefined) throw new Error(`Parameter "${name}" is not defined in the project`);
    return def;
  }

  private descendants(name: string): string[] {
    const found: string[] = [];
    const queue = [...(this.childrenOf.get(name) ?? [])];
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (found.includes(next)) continue;
      found.push(next);
      queue.push(...(this.childrenOf.get(next) ?? []));
    }
    return found;
  }

  private parentsFirst(): ParameterDefinition[] {
    const ordered: ParameterDefinition[] = [];
    const placed = new Set<string>();
    const place = (def: ParameterDefinition, path: Set<string>) => {
      if (placed.has(def.name) || path.has(def.name)) return;
      path.add(def.name);
      const parent = def.parent === null ? undefined : this.byName.get(def.parent);
      if (parent) place(parent, path);
      placed.add(def.name);
      ordered.push(def);
    };
    this.definitions.forEach((def) => place(def, new Set()));
    return ordered;
  }
}

/** ` (did you mean "start_date"?)` for `strat_date`, or nothing. */
export function meant(name: string, names: readonly string[]): string {
  const closest = closestName(name, names);
  return closest === undefined ? '' : ` (did you mean "${closest}"?)`;
}

function accepts(names: readonly string[]): string {
  return names.length > 0 ? `it takes ${names.join(', ')}` : 'it takes no parameters';
}
