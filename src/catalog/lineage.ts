import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Project } from '@/project/project';

export interface LineageNode {
  type: 'seed' | 'source' | 'build' | 'runtime' | 'dbview' | 'dataset' | 'dashboard' | 'connection';
  name: string;
}

export interface LineageEdge {
  source: LineageNode;
  target: LineageNode;
}

// Dashboard templates read datasets through `dataset('name', ...)`.
const DATASET_CALL = /\bdataset\(\s*['"]([A-Za-z0-9_]+)['"]/g;

/** Datasets a dashboard template reads. */
export function datasetsOfTemplate(template: string): string[] {
  return [...new Set([...template.matchAll(DATASET_CALL)].map((match) => match[1]))];
}

/**
 * Edges from connections and seeds through models to datasets and dashboards. Pure but for reading the
 * dashboard templates, which happens once.
 */
export function projectLineage(project: Project): LineageEdge[] {
  const edges: LineageEdge[] = [];
  const kindOf = new Map(project.models.map((model) => [model.name, model.kind]));
  for (const model of project.models) {
    const target: LineageNode = { type: model.kind, name: model.name };
    if (model.kind === 'source' || model.kind === 'dbview') {
      edges.push({ source: { type: 'connection', name: model.connection }, target });
    }
    if ('refs' in model) {
      for (const ref of model.refs) {
        const kind = kindOf.get(ref);
        if (kind) edges.push({ source: { type: kind, name: ref }, target });
      }
    }
  }
  for (const dataset of project.datasets) {
    const kind = kindOf.get(dataset.model);
    if (kind) {
      edges.push({
        source: { type: kind, name: dataset.model },
        target: { type: 'dataset', name: dataset.name },
      });
    }
  }
  for (const dashboard of project.dashboards) {
    const template = readFileSync(join(project.dir, dashboard.template), 'utf8');
    for (const name of datasetsOfTemplate(template)) {
      edges.push({
        source: { type: 'dataset', name },
        target: { type: 'dashboard', name: dashboard.name },
      });
    }
  }
  return edges;
}
