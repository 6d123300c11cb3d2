import type { ConnectionSpec, Model, ModelKind } from '@/core/project/project';
import { Problems } from '@/core/project-errors';
import type { LoadedModel } from '@/core/project/model-files';

/** What each kind of model may ref, and why, for the problem message. */
const MAY_REF: Record<ModelKind, { kinds: ModelKind[]; rule: string }> = {
  seed: { kinds: [], rule: 'seeds ref nothing' },
  source: { kinds: [], rule: 'sources run on their connection and ref nothing' },
  build: {
    kinds: ['seed', 'source', 'build'],
    rule: 'build models read only seeds, sources and build models',
  },
  runtime: {
    kinds: ['seed', 'source', 'build', 'runtime'],
    rule: 'runtime models read the built environment and other runtime models',
  },
  dbview: {
    kinds: ['source'],
    rule: 'dbview models run on their connection and ref only its tables, through source models',
  },
};

function connectionOf(model: Model): string | undefined {
  return model.kind === 'source' || model.kind === 'dbview' ? model.connection : undefined;
}

function checkRefs(
  loaded: LoadedModel,
  byName: Map<string, Model>,
  connections: ReadonlySet<string>,
  problems: Problems,
  unread: ReadonlySet<string>,
): void {
  const { model } = loaded;
  const connection = connectionOf(model);
  if (connection !== undefined && !connections.has(connection)) {
    problems.add(
      model.metadataFile ?? loaded.refFile,
      'connection',
      `no connection named "${connection}"`,
    );
  }
  for (const ref of loaded.refLines) {
    const at = `line ${ref.line}`;
    const target = byName.get(ref.name);
    if (!target) {
      // Its .yml did not parse: that problem is reported, and this one would only repeat it.
      if (unread.has(ref.name)) continue;
      problems.add(loaded.refFile, at, `ref('${ref.name}'): no model named "${ref.name}"`);
      continue;
    }
    const rule = MAY_REF[model.kind];
    if (!rule.kinds.includes(target.kind)) {
      problems.add(
        loaded.refFile,
        at,
        `ref('${ref.name}'): "${ref.name}" is a ${target.kind} model; ${rule.rule}`,
      );
    } else if (model.kind === 'dbview' && target.kind === 'source') {
      if (target.connection !== connection || !target.table) {
        problems.add(
          loaded.refFile,
          at,
          `ref('${ref.name}'): a dbview model refs only sources that name a table of its own connection`,
        );
      }
    }
  }
}

/**
 * Checks every ref and returns the models in dependency order, reporting each cycle once. Problems are
 * added, not thrown. A ref to one of `unread` (a model whose .yml does not parse) is not reported again.
 */
export function orderModels(
  loaded: LoadedModel[],
  connections: ConnectionSpec[],
  problems: Problems,
  unread: ReadonlySet<string> = new Set(),
): Model[] {
  const byName = new Map(loaded.map((entry) => [entry.model.name, entry.model]));
  const entries = new Map(loaded.map((entry) => [entry.model.name, entry]));
  const connectionNames = new Set(connections.map((connection) => connection.name));
  for (const entry of loaded) checkRefs(entry, byName, connectionNames, problems, unread);

  const ordered: Model[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    const entry = entries.get(name);
    if (!entry || state.get(name) === 'done') return;
    state.set(name, 'visiting');
    stack.push(name);
    for (const ref of entry.refLines) {
      if (!byName.has(ref.name)) continue;
      if (state.get(ref.name) === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(ref.name)), ref.name];
        problems.add(entry.refFile, `line ${ref.line}`, `ref cycle: ${cycle.join(' -> ')}`);
        continue;
      }
      visit(ref.name);
    }
    stack.pop();
    state.set(name, 'done');
    ordered.push(entry.model);
  };
  for (const entry of loaded) visit(entry.model.name);
  return ordered;
}
