import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CallerSlots, slotOwner } from '@/core/caller-slots';
import { currentRequest } from '@/runtime/request-scope';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/project/scope';
import { embedRequest } from '@/core/embedding/embed-request';
import { calledDataset, datasetRequest, templateDataset } from '@/dashboards/dashboard-datasets';
import { BrowserPool } from '@/dashboards/render/browser-pool';
import type { PngOptions } from '@/dashboards/render/page-drawer';
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
import type { Environment } from '@/engine/environment/environment';
import type { CallerReads } from '@/engine/query/model-reads';
import { DatasetsService } from '@/datasets/datasets.service';
import {
  callerParts,
  canonicalSelections,
  etagMatches,
  resultKeyText,
  storeKey,
} from '@/datasets/results/result-keys';
import { DashboardCache } from '@/dashboards/dashboard-cache';
import { RenderedPage, etagOfBody } from '@/dashboards/rendered-page';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import { findItem } from '@/core/project/items';
import type { DashboardFormat, DashboardSpec, Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

/** Who else may show a dashboard's page: the same for its body and for a 304, which refreshes a kept copy. */
export interface DashboardEmbedding {
  /** Origins that may frame the page (EMBED_FRAME_ORIGINS); none when empty. */
  framedBy: readonly string[];
  /**
   * Whether a page of another origin may load it as it is (an `<img>` of a PNG): embedding is configured
   * and the page was opened by an embedding token or by nobody. A signed-in user's page stays loadable by
   * Drey's own origin alone: a browser sends their session cookie with a same-site image, and another page
   * must not pull what that cookie opens into its process.
   */
  crossOrigin: boolean;
}

/** What a dashboard request is answered with, before HTTP. */
export type DashboardReply = DashboardEmbedding &
  (
    | {
        kind: 'body';
        name: string;
        format: DashboardFormat;
        contentType: string;
        body: Buffer;
        /** Absent for a page that is not cached (its datasets may change between runs). */
        etag?: string;
      }
    /** The client's copy (`If-None-Match`) is current. */
    | { kind: 'not-modified'; etag: string }
  );

/** What a dashboard's page depends on, found before it is rendered. */
interface PageKey {
  key: string;
  cacheable: boolean;
}

/** PNGs are as wide as a laptop screen; the height grows with the page. */
const PNG_VIEWPORT: PngOptions = { width: 1200, height: 800 };

@Injectable()
export class DashboardsService {
  /** Each project's compiled templates: the start's (compiled by the module), then each build's. */
  private readonly compiled = new WeakMap<Project, DashboardPages>();

  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParameterCatalogService,
    private readonly datasets: DatasetsService,
    private readonly cache: DashboardCache,
    pages: DashboardPages,
    private readonly pool: BrowserPool,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.frameOrigins = config.embedding.frameOrigins;
    this.compiled.set(served.current, pages);
    this.slots = new CallerSlots(config.callerSlots);
  }

  private readonly frameOrigins: readonly string[];

  /** Renders running per caller: each runs the dashboard's queries, a PNG also holds a browser page. */
  private readonly slots: CallerSlots;

  /** The templates of the project served, compiled once per project. */
  private get pages(): DashboardPages {
    let pages = this.compiled.get(this.served.current);
    if (!pages) {
      pages = new DashboardPages(this.served.current, this.frameOrigins);
      this.compiled.set(this.served.current, pages);
    }
    return pages;
  }

  /**
   * A dashboard by its configured name: the caller must be allowed to open the dashboard (checked before
   * the cache is asked, so a kept page never reaches a caller who may not open it); its selections are
   * validated. The page is HTML, or PNG drawn from the same HTML, kept by everything it depends on (see
   * {@link pageKey}) and rendered once for identical requests running together, in any process.
   */
  async render(
    caller: Caller,
    name: string,
    sent: ParameterRequest,
    ifNoneMatch?: string,
    as?: DashboardFormat,
  ): Promise<DashboardReply> {
    const dashboard = findItem(this.served.current, 'dashboard', name, caller);
    requireScope(dashboard.scope, caller, `the dashboard "${dashboard.name}"`);
    // An embedding's locked values and defaults, for the dashboard and the datasets it reads alike.
    const request = embedRequest(caller, dashboard.parameters, sent);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const values = canonicalSelections(
      catalog,
      catalog.selections(dashboard.parameters, request, view),
    );
    const owner = slotOwner(caller.username, currentRequest()?.address);
    // Held while the page is keyed and drawn, so that the build in the key is the one its rows come from.
    const lease = await this.engine.acquireEnvironment();
    try {
      const environment = lease.environment;
      // The format asked for (the MCP tool asks PNG of every dashboard), else the dashboard's own.
      const format = as ?? dashboard.format;
      const { key, cacheable } = this.pageKey(
        dashboard,
        environment.id,
        values,
        view,
        catalog,
        format,
      );
      const page = await this.cache.get(
        dashboard.name,
        key,
        // A render takes a slot of its caller; a request answered from the cache, or joining a running
        // render, takes none.
        () =>
          this.slots.run('render', owner, () =>
            this.renderAs(dashboard, { request, values, view, catalog, environment }, format),
          ),
        cacheable,
      );
      const etag = cacheable ? page.etag : undefined;
      const embedding = this.embedding(caller);
      if (etag && etagMatches(ifNoneMatch, etag)) {
        return { kind: 'not-modified', etag, ...embedding };
      }
      return {
        kind: 'body',
        name: dashboard.name,
        format,
        contentType: page.contentType,
        body: page.body,
        etag,
        ...embedding,
      };
    } finally {
      lease.release();
    }
  }

  private embedding(caller: Caller): DashboardEmbedding {
    const framedBy = this.frameOrigins;
    const crossOrigin =
      framedBy.length > 0 && (caller.embed !== undefined || caller.username === null);
    return { framedBy, crossOrigin };
  }

  /**
   * The key of a dashboard's page: the build, the dashboard, its canonical selections, and the parts of the
   * caller that the datasets its template can read look at: what their models read of the caller, and the
   * user fields that decide which options of their parameters the caller may choose (so a dataset's default
   * for a parameter the dashboard does not pass is the one this caller gets). Not cacheable when one of
   * those datasets is not (a live database, a function whose value changes between runs).
   */
  private pageKey(
    dashboard: DashboardSpec,
    buildId: string,
    values: SelectionValues,
    view: CallerView,
    catalog: ParameterCatalog,
    format: DashboardFormat,
  ): PageKey {
    const names = this.pages.datasetsRead(dashboard, this.served.current);
    let all = false;
    let cacheable = true;
    const fields = new Set<string>();
    const parameters = new Set(dashboard.parameters);
    for (const name of names) {
      const read = this.engine.datasetReads(name);
      if (read.uncacheable !== undefined) cacheable = false;
      if (read.caller === 'all') all = true;
      else for (const field of read.caller) fields.add(field);
      const dataset = this.served.current.datasets.find((candidate) => candidate.name === name);
      for (const parameter of dataset?.parameters ?? []) parameters.add(parameter);
    }
    for (const field of groupFields(catalog, parameters)) fields.add(field);
    const reads: CallerReads = all ? 'all' : [...fields].sort();
    const caller = callerParts(view, reads);
    // A page in a format other than the dashboard's own is another page (a PNG of an HTML dashboard).
    const other = format === dashboard.format ? '' : `${format}\u0000`;
    const keyText = `dashboard\u0000${other}${resultKeyText(buildId, dashboard.name, values, caller)}`;
    return { key: storeKey(buildId, `dashboard:${dashboard.name}`, keyText), cacheable };
  }

  private async renderAs(
    dashboard: DashboardSpec,
    input: PageInput,
    format: DashboardFormat,
  ): Promise<RenderedPage> {
    const html = await this.html(dashboard, input);
    const rendered =
      format === 'html'
        ? { contentType: 'text/html; charset=utf-8', body: Buffer.from(html, 'utf8') }
        : { contentType: 'image/png', body: await this.pool.renderPng(html, PNG_VIEWPORT) };
    return { ...rendered, etag: etagOfBody(rendered.body) };
  }

  private async html(dashboard: DashboardSpec, input: PageInput): Promise<string> {
    const { request, values, view, catalog, environment } = input;
    const context: Omit<PageContext, 'dataset'> = {
      dashboard: {
        name: dashboard.name,
        label: dashboard.label,
        description: dashboard.description,
        format: dashboard.format,
      },
      project: {
        name: this.served.current.name,
        label: this.served.current.label,
        description: this.served.current.description,
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
          Promise.all(
            calls.map((call) => this.read(dashboard, call, request, catalog, view, environment)),
          ),
        {
          check: (call) =>
            datasetRequest(
              dashboard,
              calledDataset(this.served.current, call),
              request,
              call.fixed,
            ),
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
   * to some users and row rules over `user` fields hold. Read through the dataset results cache: the same
   * dataset, selections and caller parts asked over HTTP share its entry.
   */
  private async read(
    dashboard: DashboardSpec,
    call: DatasetCall,
    request: ParameterRequest,
    catalog: ParameterCatalog,
    view: CallerView,
    environment: Environment,
  ): Promise<TemplateDataset> {
    const dataset = calledDataset(this.served.current, call);
    const own = datasetRequest(dashboard, dataset, request, call.fixed);
    const selections = catalog.selections(dataset.parameters, own, view);
    return templateDataset(
      await this.datasets.rowsForDashboard(dataset, selections, view, environment),
    );
  }
}

/** What a page is rendered from. */
interface PageInput {
  request: ParameterRequest;
  /** The dashboard's own selections, canonical (what the key holds). */
  values: SelectionValues;
  view: CallerView;
  catalog: ParameterCatalog;
  environment: Environment;
}

/**
 * The user fields that decide which options of `parameters` a caller may choose (`user_group_field`), their
 * parents' included: cascading evaluates a parent to find its children's options.
 */
function groupFields(catalog: ParameterCatalog, parameters: Iterable<string>): string[] {
  const fields = new Set<string>();
  const seen = new Set<string>();
  const visit = (name: string | null): void => {
    if (name === null || seen.has(name)) return;
    seen.add(name);
    const definition = catalog.definition(name);
    if (definition?.kind === 'select' && definition.userGroupField) {
      fields.add(definition.userGroupField.name);
    }
    visit(definition?.parent ?? null);
  };
  for (const name of parameters) visit(name);
  return [...fields];
}
