import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Model, Project } from '@/core/project/project';

/** A node of the lineage graph, in the b-era shape that Squirrels Studio v1 draws. */
export interface LineageNode {
  type: 'model' | 'dataset' | 'dashboard';
  name: string;
}

/**
 * An edge of the lineage graph: `buildtime` when the build materialises the target from the source (the
 * target is a build model), `runtime` when the target is computed per request (runtime and dbview models,
 * datasets, dashboards).
 */
export interface LineageEdge {
  type: 'buildtime' | 'runtime';
  source: LineageNode;
  target: LineageNode;
}

// Dashboard templates read datasets through `dataset('name', ...)`.
const DATASET_CALL = /\bdataset\(\s*['"]([A-Za-z0-9_]+)['"]/g;

/** Datasets a dashboard template reads. */
export function datasetsOfTemplate(template: string): string[] {
  return [...new Set([...template.matchAll(DATASET_CALL)].map((match) => match[1]))];
}

function edgeKindOf(model: Model): LineageEdge['type'] {
  return model.kind === 'build' ? 'buildtime' : 'runtime';
}

/**
 * Edges from models through models to datasets and dashboards: every `ref()` of a model, the model of
 * every dataset, and every dataset a dashboard template reads. Pure but for reading the dashboard
 * templates, which happens once.
 */
export function projectLineage(project: Project): LineageEdge[] {
  const edges: LineageEdge[] = [];
  const models = new Set(project.models.map((model) => model.name));
  const datasets = new Set(project.datasets.map((dataset) => dataset.name));
  for (const model of project.models) {
    if (!('refs' in model)) continue;
    for (const ref of model.refs) {
      if (!models.has(ref)) continue;
      edges.push({
        type: edgeKindOf(model),
        source: { type: 'model', name: ref },
        target: { type: 'model', name: model.name },
      });
    }
  }
  for (const dataset of project.datasets) {
    if (!models.has(dataset.model)) continue;
    edges.push({
      type: 'runtime',
      source: { type: 'model', name: dataset.model },
      target: { type: 'dataset', name: dataset.name },
    });
  }
  for (const dashboard of project.dashboards) {
    const template = readFileSync(join(project.dir, dashboard.template), 'utf8');
    for (const name of datasetsOfTemplate(template)) {
      if (!datasets.has(name)) continue;
      edges.push({
        type: 'runtime',
        source: { type: 'dataset', name },
        target: { type: 'dashboard', name: dashboard.name },
      });
    }
  }
  return edges;
}
