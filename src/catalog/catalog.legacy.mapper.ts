import { dashboardEntry } from '@/catalog/catalog.mapper';
import type { OpenItems } from '@/catalog/catalog.service';
import { legacyPath } from '@/http/routes';
import type { Project } from '@/core/project/project';

type Json = Record<string, unknown>;

/** `GET /service-v0`: the 0.4 service's listing of its projects, here the one served. */
export function toProjectListing(project: Project): Json {
  const prefix = legacyPath(project);
  return {
    name: project.name,
    label: project.label,
    // A project has no minor versions of its own.
    versions: [
      {
        major_version: project.majorVersion,
        minor_versions: [0],
        token_path: `${prefix}/token`,
        data_catalog_path: `${prefix}/data-catalog`,
      },
    ],
  };
}

/**
 * The legacy data catalog: datasets and dashboards only (no parameters, schema, connections, models or
 * lineage), with legacy paths under `prefix` (the served project's legacy path).
 */
export function toLegacyDataCatalog(items: OpenItems, prefix: string): Json {
  return {
    datasets: items.datasets.map((dataset) => ({
      name: dataset.name,
      label: dataset.label,
      description: dataset.description,
      parameters_path: `${prefix}/dataset/${dataset.name}/parameters`,
      result_path: `${prefix}/dataset/${dataset.name}`,
    })),
    dashboards: items.dashboards.map((dashboard) => ({
      ...dashboardEntry(dashboard),
      parameters_path: `${prefix}/dashboard/${dashboard.name}/parameters`,
      result_path: `${prefix}/dashboard/${dashboard.name}`,
    })),
  };
}
