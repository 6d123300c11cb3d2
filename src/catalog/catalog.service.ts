import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, canOpen } from '@/core/scope';
import { catalogConnections, catalogModels, declaredFields } from '@/catalog/catalog-detail';
import { LineageEdge, projectLineage } from '@/catalog/lineage';
import { ParametersService } from '@/parameters/parameters.service';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';
import { findModel } from '@/core/project/project';
import type { SchemaField } from '@/datasets/result-shape';
import { PROJECT } from '@/project/project.tokens';

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
  private readonly lineage: LineageEdge[];
  private readonly connections: Json[];
  private readonly models: Json[];

  constructor(
    private readonly parameters: ParametersService,
    @Inject(PROJECT) private readonly project: Project,
  ) {
    this.lineage = projectLineage(project);
    this.connections = catalogConnections(project);
    this.models = catalogModels(project);
  }

  openItems(caller: Caller): OpenItems {
    return {
      datasets: this.project.datasets.filter((dataset) => canOpen(dataset.scope, caller)),
      dashboards: this.project.dashboards.filter((dashboard) => canOpen(dashboard.scope, caller)),
    };
  }

  async catalog(caller: Caller): Promise<DataCatalog> {
    const catalog = await this.parameters.catalog();
    return {
      ...this.openItems(caller),
      parameters: catalog.widgets(catalog.names(), emptyParameterRequest(), callerView(caller)),
      fieldsOf: (dataset) => declaredFields(findModel(this.project, dataset.model)),
      connections: caller.isAdmin ? this.connections : [],
      models: caller.isAdmin ? this.models : [],
      lineage: caller.isAdmin ? this.lineage : [],
    };
  }
}
