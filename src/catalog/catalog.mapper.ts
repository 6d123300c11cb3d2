import type { DataCatalog } from '@/catalog/catalog.service';

type Json = Record<string, unknown>;

/** The current layout's data catalog, with paths under `prefix` (the served project's current path). */
export function toDataCatalog(catalog: DataCatalog, prefix: string): Json {
  return {
    parameters: catalog.parameters,
    datasets: catalog.datasets.map((dataset) => ({
      name: dataset.name,
      label: dataset.label,
      description: dataset.description,
      schema: { fields: catalog.fieldsOf(dataset) },
      parameters: dataset.parameters,
      parameters_path: `${prefix}/datasets/${dataset.name}/parameters`,
      result_path: `${prefix}/datasets/${dataset.name}/results`,
    })),
    dashboards: catalog.dashboards.map((dashboard) => ({
      name: dashboard.name,
      label: dashboard.label,
      description: dashboard.description,
      result_format: dashboard.format,
      parameters: dashboard.parameters,
      parameters_path: `${prefix}/dashboards/${dashboard.name}/parameters`,
      result_path: `${prefix}/dashboards/${dashboard.name}/results`,
    })),
    connections: catalog.connections,
    models: catalog.models,
    lineage: catalog.lineage,
  };
}
