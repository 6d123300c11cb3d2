import { Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, canOpenItem } from '@/core/project/scope';
import { choosableWidgets, embedRequest } from '@/core/embedding/embed-request';
import { catalogConnections, catalogModels, declaredFields } from '@/catalog/catalog-detail';
import { LineageEdge, projectLineage } from '@/catalog/lineage';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';
import { findModel } from '@/core/project/project';
import type { SchemaField } from '@/datasets/results/result-shape';
import { ServedProject } from '@/core/project/served-project';

type Json = Record<string, unknown>;

/** The datasets and dashboards a caller may open: public ones for anonymous callers. */
export interface OpenItems {
  datasets: DatasetSpec[];
  dashboards: DashboardSpec[];
}

/** What the caller may open with its parameters and fields, and for administrators how it is made. */
export interface DataCatalog extends OpenItems {
  parameters: WidgetJson[];
  /** The fields each dataset's model declares. */
  fieldsOf: (dataset: DatasetSpec) => SchemaField[];
  connections: Json[];
  models: Json[];
  lineage: LineageEdge[];
}

/** The data catalog: what the caller may open, and for administrators how it is made. */
@Injectable()
export class CatalogService {
  /** What the administrators' catalog shows of a project, worked out once per project served. */
  private readonly adminParts = new WeakMap<
    Project,
    { lineage: LineageEdge[]; connections: Json[]; models: Json[] }
  >();

  constructor(
    private readonly parameters: ParameterCatalogService,
    private readonly served: ServedProject,
  ) {}

  private adminPartsOf(project: Project) {
    let parts = this.adminParts.get(project);
    if (!parts) {
      parts = {
        lineage: projectLineage(project),
        connections: catalogConnections(project),
        models: catalogModels(project),
      };
      this.adminParts.set(project, parts);
    }
    return parts;
  }

  openItems(caller: Caller): OpenItems {
    return {
      datasets: this.served.current.datasets.filter((dataset) =>
        canOpenItem('dataset', dataset, caller),
      ),
      dashboards: this.served.current.dashboards.filter((dashboard) =>
        canOpenItem('dashboard', dashboard, caller),
      ),
    };
  }

  async catalog(caller: Caller): Promise<DataCatalog> {
    const catalog = await this.parameters.catalog();
    const open = this.openItems(caller);
    return {
      ...open,
      parameters: caller.embed
        ? this.embeddedParameters(caller, [...open.datasets, ...open.dashboards], catalog)
        : catalog.widgets(catalog.names(), emptyParameterRequest(), callerView(caller)),
      fieldsOf: (dataset) => declaredFields(findModel(this.served.current, dataset.model)),
      connections: caller.isAdmin ? this.adminPartsOf(this.served.current).connections : [],
      models: caller.isAdmin ? this.adminPartsOf(this.served.current).models : [],
      lineage: caller.isAdmin ? this.adminPartsOf(this.served.current).lineage : [],
    };
  }

  /**
   * An embedding's catalog lists its item's parameters alone, as the item's parameters endpoint shows them:
   * the locked ones applied and left out.
   */
  private embeddedParameters(
    caller: Caller,
    items: { parameters: string[] }[],
    catalog: ParameterCatalog,
  ): WidgetJson[] {
    const parameters = items[0]?.parameters ?? [];
    const request = embedRequest(caller, parameters, emptyParameterRequest());
    return choosableWidgets(caller, catalog.widgets(parameters, request, callerView(caller)));
  }
}
