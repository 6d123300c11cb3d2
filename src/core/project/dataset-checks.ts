import type { DatasetSpec, Model } from '@/core/project/project';
import { findParams } from '@/core/project/sql-template-check';
import type { FileContext } from '@/core/project/yaml-fields';

/** The models whose SQL runs when `model` is computed for a request: itself and the runtime models it reads. */
function requestModels(model: Model, byName: Map<string, Model>): Model[] {
  const seen = new Map<string, Model>();
  const visit = (current: Model): void => {
    if (seen.has(current.name)) return;
    seen.set(current.name, current);
    if (current.kind !== 'runtime') return;
    for (const ref of current.refs) {
      const target = byName.get(ref);
      if (target?.kind === 'runtime') visit(target);
    }
  };
  visit(model);
  return [...seen.values()];
}

/**
 * A dataset's models may read only the parameters the dataset declares: a request brings selections for
 * those and no others, so anything else would fail on every request.
 */
export function checkDatasetParameters(
  at: FileContext,
  datasets: readonly DatasetSpec[],
  models: readonly Model[],
  datasetIndex: (name: string) => number,
): void {
  const byName = new Map(models.map((model) => [model.name, model]));
  for (const dataset of datasets) {
    const model = byName.get(dataset.model);
    if (!model) continue;
    for (const read of requestModels(model, byName)) {
      if (read.kind !== 'runtime' && read.kind !== 'dbview') continue;
      for (const param of findParams(read.sql)) {
        if (dataset.parameters.includes(param.name)) continue;
        at.problems.add(
          at.file,
          `datasets[${datasetIndex(dataset.name)}].parameters`,
          `must include "${param.name}": ${read.sqlFile} line ${param.line} reads params.${param.name}`,
        );
      }
    }
  }
}
