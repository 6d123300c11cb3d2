import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, canOpen } from '@/core/scope';
import { catalogConnections, catalogModels, declaredFields } from '@/catalog/catalog-detail';
import { LineageEdge, projectLineage } from '@/catalog/lineage';
import { ParametersService } from '@/parameters/parameters.service';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { DashboardSpec, Project } from '@/core/project/project';
import { findModel, projectVersion } from '@/core/project/project';
import { PROJECT } from '@/project/project.tokens';

type Json = Record<string, unknown>;

/** The data catalog: what the caller may open, and for administrators how it is made. */
@Injectable()
export class CatalogService {
  private readonly lineage: LineageEdge[];
  private readonly connections: Json[];
  private readonly models: Json[];
  private readonly current: string;
  private readonly legacy: string;

  constructor(
    private readonly parameters: ParametersService,
    @Inject(PROJECT) private readonly project: Project,
  ) {
    this.lineage = projectLineage(project);
    this.connections = catalogConnections(project);
    this.models = catalogModels(project);
    const version = projectVersion(project);
    this.current = `/api/service-v0/project/${project.name}/${version}`;
    this.legacy = `/service-v0/${project.name}/${version}`;
  }

  /** `GET /service-v0`: the 0.4 service's listing of its projects, here the one served. */
  listing(): Json {
    return {
      name: this.project.name,
      label: this.project.label,
      // A project has no minor versions of its own.
      versions: [
        {
          major_version: this.project.majorVersion,
          minor_versions: [0],
          token_path: `${this.legacy}/token`,
          data_catalog_path: `${this.legacy}/data-catalog`,
        },
      ],
    };
  }

  async catalog(caller: Caller): Promise<Json> {
    const catalog = await this.parameters.catalog();
    const datasets = this.project.datasets.filter((dataset) => canOpen(dataset.scope, caller));
    const dashboards = this.project.dashboards.filter((dashboard) =>
      canOpen(dashboard.scope, caller),
    );
    return {
      parameters: catalog.widgets(catalog.names(), emptyParameterRequest(), callerView(caller)),
      datasets: datasets.map((dataset) => ({
        name: dataset.name,
        label: dataset.label,
        description: dataset.description,
        schema: { fields: declaredFields(findModel(this.project, dataset.model)) },
        parameters: dataset.parameters,
        parameters_path: `${this.current}/datasets/${dataset.name}/parameters`,
        result_path: `${this.current}/datasets/${dataset.name}/results`,
      })),
      dashboards: dashboards.map((dashboard) => ({
        ...this.dashboardEntry(dashboard),
        parameters: dashboard.parameters,
        parameters_path: `${this.current}/dashboards/${dashboard.name}/parameters`,
        result_path: `${this.current}/dashboards/${dashboard.name}/results`,
      })),
      connections: caller.isAdmin ? this.connections : [],
      models: caller.isAdmin ? this.models : [],
      lineage: caller.isAdmin ? this.lineage : [],
    };
  }

  /** The legacy catalog: public items for anonymous callers, legacy paths, no schema or parameters. */
  legacyCatalog(caller: Caller): Json {
    return {
      datasets: this.project.datasets
        .filter((dataset) => canOpen(dataset.scope, caller))
        .map((dataset) => ({
          name: dataset.name,
          label: dataset.label,
          description: dataset.description,
          parameters_path: `${this.legacy}/dataset/${dataset.name}/parameters`,
          result_path: `${this.legacy}/dataset/${dataset.name}`,
        })),
      dashboards: this.project.dashboards
        .filter((dashboard) => canOpen(dashboard.scope, caller))
        .map((dashboard) => ({
          ...this.dashboardEntry(dashboard),
          parameters_path: `${this.legacy}/dashboard/${dashboard.name}/parameters`,
          result_path: `${this.legacy}/dashboard/${dashboard.name}`,
        })),
    };
  }

  private dashboardEntry(dashboard: DashboardSpec): Json {
    return {
      name: dashboard.name,
      label: dashboard.label,
      description: dashboard.description,
      result_format: dashboard.format,
    };
  }
}
