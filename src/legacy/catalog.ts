import { legacyPath } from '@/legacy/routes';
import type { Project } from '@/core/project/project';

type Json = Record<string, unknown>;

/** What the legacy catalog reads of the items a caller may open (catalog/catalog.service.ts's OpenItems). */
export interface LegacyCatalogItems {
  datasets: { name: string; label: string; description: string }[];
  dashboards: { name: string; label: string; description: string; format: string }[];
}

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
 * lineage), with legacy paths under `prefix` (the served project's legacy path). A dashboard's first four
 * fields are those of the current catalog's entry.
 */
export function toLegacyDataCatalog(items: LegacyCatalogItems, prefix: string): Json {
  return {
    datasets: items.datasets.map((dataset) => ({
      name: dataset.name,
      label: dataset.label,
      description: dataset.description,
      parameters_path: `${prefix}/dataset/${dataset.name}/parameters`,
      result_path: `${prefix}/dataset/${dataset.name}`,
    })),
    dashboards: items.dashboards.map((dashboard) => ({
      name: dashboard.name,
      label: dashboard.label,
      description: dashboard.description,
      result_format: dashboard.format,
      parameters_path: `${prefix}/dashboard/${dashboard.name}/parameters`,
      result_path: `${prefix}/dashboard/${dashboard.name}`,
    })),
  };
}
