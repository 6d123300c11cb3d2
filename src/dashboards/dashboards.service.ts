import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CallerSlots, slotOwner } from '@/core/caller-slots';
import { currentRequest } from '@/http/request/request-context';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/scope';
import { calledDataset, datasetRequest, templateDataset } from '@/dashboards/dashboard-datasets';
import { BrowserPool, PngOptions } from '@/dashboards/render/browser-pool';
import {
  DashboardPages,
  DashboardTemplateError,
  PageContext,
} from '@/dashboards/template/dashboard-pages';
import {
  DatasetCall,
  DatasetCallError,
  renderWithDatasets,
} from '@/dashboards/template/dataset-passes';
import type { TemplateDataset } from '@/dashboards/template/helper-input';
import { selectedData, shownSelections } from '@/dashboards/template/selection-text';
import { Engine } from '@/engine/engine';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { ParametersService } from '@/parameter-widgets/parameters.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { findItem } from '@/core/project/items';
import type { DashboardFormat, DashboardSpec, Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

/** A rendered dashboard: the bytes and what they are. */
export interface RenderedDashboard {
  name: string;
  format: DashboardFormat;
  contentType: string;
  body: Buffer;
}

/** PNGs are as wide as a laptop screen; the height grows with the page. */
const PNG_VIEWPORT: PngOptions = { width: 1200, height: 800 };

@Injectable()
export class DashboardsService {
  /** The project being served now (a build may replace it): read per use, never kept. */
  private get project(): Project {
    return this.served.current;
  }

  /** Each project's compiled templates: the start's (compiled by the module), then each build's. */
  private readonly compiled = new WeakMap<Project, DashboardPages>();

  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParametersService,
    pages: DashboardPages,
    private readonly pool: BrowserPool,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.compiled.set(served.current, pages);
    this.slots = new CallerSlots(config.callerSlots);
  }

  /** Renders running per caller: each runs the dashboard's queries, a PNG also holds a browser page. */
  private readonly slots: CallerSlots;

  /** The templates of the project served, compiled once per project. */
  private get pages(): DashboardPages {
    let pages = this.compiled.get(this.project);
    if (!pages) {
      pages = new DashboardPages(this.project);
      this.compiled.set(this.project, pages);
    }
    return pages;
  }

  /**
   * A dashboard by its configured name: the caller must be allowed to open
   * the dashboard; its selections are validated; the page is HTML, or PNG rendered from the same HTML.
   */
  async render(
    caller: Caller,
    name: string,
    request: ParameterRequest,
  ): Promise<RenderedDashboard> {
    const dashboard = findItem(this.project, 'dashboard', name, caller);
    requireScope(dashboard.scope, caller, `the dashboard "${dashboard.name}"`);
    const owner = slotOwner(caller.username, currentRequest()?.address);
    return this.slots.run('render', owner, () => this.renderAs(dashboard, caller, request));
  }

  private async renderAs(
    dashboard: DashboardSpec,
    caller: Caller,
    request: ParameterRequest,
  ): Promise<RenderedDashboard> {
    const html = await this.html(dashboard, caller, request);
    switch (dashboard.format) {
      case 'html':
        return {
          name: dashboard.name,
          format: 'html',
          contentType: 'text/html; charset=utf-8',
          body: Buffer.from(html, 'utf8'),
        };
      case 'png':
        return {
          name: dashboard.name,
          format: 'png',
          contentType: 'image/png',
          body: await this.pool.renderPng(html, PNG_VIEWPORT),
        };
    }
  }

  private async html(
    dashboard: DashboardSpec,
    caller: Caller,
    request: ParameterRequest,
  ): Promise<string> {
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const values = catalog.selections(dashboard.parameters, request, view);
    const context: Omit<PageContext, 'dataset'> = {
      dashboard: {
        name: dashboard.name,
        label: dashboard.label,
        description: dashboard.description,
        format: dashboard.format,
      },
      project: {
        name: this.project.name,
        label: this.project.label,
        description: this.project.description,
      },
      selections: shownSelections(
        dashboard.parameters,
        values,
        (parameter) => catalog.definition(parameter)?.label ?? parameter,
      ),
      selected: selectedData(values),
      rendered_at: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    };
    try {
      return await renderWithDatasets(
        (dataset) => this.pages.render(dashboard, { ...context, dataset }),
        (calls) =>
          Promise.all(calls.map((call) => this.read(dashboard, call, request, catalog, view))),
        {
          check: (call) =>
            datasetRequest(dashboard, calledDataset(this.project, call), request, call.fixed),
        },
      );
    } catch (error) {
      // Limits of the whole page (how many datasets, how many renderings) are the template's too.
      if (error instanceof DatasetCallError) {
        throw new DashboardTemplateError(dashboard.template, undefined, error.message, error);
      }
      throw error;
    }
  }

  /**
   * A dataset the template reads runs as the dashboard: its scope is not checked against the caller, whose
   * right to the dashboard was checked (a public dashboard may show figures of a protected dataset; the
   * template decides what of them to show). Selections and models still see the caller, so options limited
   * to some users and row rules over `user` fields hold.
   */
  private async read(
    dashboard: DashboardSpec,
    call: DatasetCall,
    request: ParameterRequest,
    catalog: ParameterCatalog,
    view: CallerView,
  ): Promise<TemplateDataset> {
    const dataset = calledDataset(this.project, call);
    const own = datasetRequest(dashboard, dataset, request, call.fixed);
    const selections = catalog.selections(dataset.parameters, own, view);
    return templateDataset(
      await this.engine.runDataset(this.engine.compileDataset(dataset, selections, view)),
    );
  }
}
