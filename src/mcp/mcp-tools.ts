import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { asAdministrator, Caller } from '@/core/caller';
import { callerView } from '@/core/project/scope';
import { choosableWidgets, embedRequest } from '@/core/embedding/embed-request';
import { ForbiddenError, InvalidRequestError } from '@/core/errors';
import { emptyParameterRequest, parseBodySelections } from '@/core/parameters/selection-request';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';
import { CatalogService } from '@/catalog/catalog.service';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import { DatasetsService } from '@/datasets/datasets.service';
import { QueryModelsService } from '@/admin/query-models.service';
import type { ToolSubjects } from '@/mcp/mcp-schemas';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import type { Project } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';
import { KeptPerView } from '@/mcp/kept-per-view';
import { decimalPrinters } from '@/engine/sql/decimal-text';
import { pageNote, rowsTable, widgetLine } from '@/mcp/mcp-text';

type Args = Record<string, unknown>;

/** What a tool call is about, for its audit row: the item it names and the selections it sent. */
export interface CallSubject {
  item: string | null;
  selections: Record<string, unknown>;
}

export function callSubject(tool: string, args: Args): CallSubject {
  const item =
    typeof args.dataset === 'string'
      ? args.dataset
      : typeof args.dashboard === 'string'
        ? args.dashboard
        : tool === 'query_models' && typeof args.sql === 'string'
          ? args.sql
          : null;
  const selections =
    typeof args.selections === 'object' && args.selections !== null
      ? (args.selections as Record<string, unknown>)
      : {};
  return { item, selections };
}

/**
 * The tools' work, through the services the HTTP endpoints call: the catalog, the parameter widgets with
 * cascading, dataset results through the results cache and its single flight, dashboards through their
 * cache and renderer, query-models for administrators. Each takes the caller and the arguments as the
 * SDK validated their JSON types; the values are checked here and by the services, which throw the
 * domain errors the HTTP endpoints answer (the server turns them into tool errors with the same body).
 */
/** Caller views whose tool subjects are kept per parameter catalog (see {@link McpTools.subjects}). */
export const SUBJECTS_KEPT = 256;

@Injectable()
export class McpTools {
  private readonly kept = new KeptPerView<
    ParameterCatalog,
    { project: Project; subjects: ToolSubjects }
  >(SUBJECTS_KEPT);

  constructor(
    private readonly catalogs: CatalogService,
    private readonly parameters: ParameterCatalogService,
    private readonly widgets: ParameterWidgetsService,
    private readonly datasets: DatasetsService,
    private readonly queryModelsService: QueryModelsService,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get rows(): AppConfig['mcpRows'] {
    return this.config.mcpRows;
  }

  /**
   * What the caller's tools are generated from: worked out once per parameter catalog (a build makes a
   * new one) and caller view, since every MCP request builds its server from them; at most
   * {@link SUBJECTS_KEPT} views per catalog are kept (a few kilobytes each).
   */
  async subjects(caller: Caller): Promise<ToolSubjects> {
    const catalog = await this.parameters.catalog();
    // The project is read with the catalog (a build replaces both): a kept entry of another project is
    // worked out again.
    const project = this.served.current;
    const view = callerView(caller);
    // An embedding's grant decides what is open and which parameters are choosable, whoever it names
    // (two tokens of one `sub` may open different items): it is part of the view.
    const grant = caller.embed
      ? [caller.embed.kind, caller.embed.name, caller.embed.locked, caller.embed.defaults]
      : null;
    const key = JSON.stringify([view.username, view.isAdmin, view.fields, grant, project.name]);
    const kept = this.kept.get(catalog, key, () => ({
      project,
      subjects: this.subjectsOf(caller, catalog),
    }));
    return kept.project === project ? kept.subjects : this.subjectsOf(caller, catalog);
  }

  private subjectsOf(caller: Caller, catalog: ParameterCatalog): ToolSubjects {
    const open = this.catalogs.openItems(caller);
    const items = [...open.datasets, ...open.dashboards];
    const used = new Set(items.flatMap((item) => item.parameters));
    const names = catalog.names().filter((name) => used.has(name));
    return { ...open, catalog, widgets: this.choosable(caller, catalog, names, items) };
  }

  /**
   * The widgets a caller may choose among, as the catalog endpoint shows them: for an embedding's holder,
   * its item's with the token's values applied and its locked parameters left out.
   */
  private choosable(
    caller: Caller,
    catalog: ParameterCatalog,
    names: string[],
    items: { parameters: string[] }[],
  ): WidgetJson[] {
    if (!caller.embed) return catalog.widgets(names, emptyParameterRequest(), callerView(caller));
    const item = items[0];
    if (item === undefined) return [];
    let request: ParameterRequest;
    try {
      request = embedRequest(caller, item.parameters, emptyParameterRequest());
    } catch {
      // A token that locks a parameter its item lacks: every call of it is refused (400), nothing to offer.
      return [];
    }
    return choosableWidgets(caller, catalog.widgets(item.parameters, request, callerView(caller)));
  }

  async catalog(caller: Caller): Promise<CallToolResult> {
    const catalog = await this.catalogs.catalog(caller);
    const used = new Set(
      [...catalog.datasets, ...catalog.dashboards].flatMap((item) => item.parameters),
    );
    const structured = {
      datasets: catalog.datasets.map((dataset) => ({
        name: dataset.name,
        label: dataset.label,
        description: dataset.description,
        parameters: dataset.parameters,
        columns: catalog
          .fieldsOf(dataset)
          .map(({ name, type, description }) => ({ name, type, description })),
      })),
      dashboards: catalog.dashboards.map((dashboard) => ({
        name: dashboard.name,
        label: dashboard.label,
        description: dashboard.description,
        format: dashboard.format,
        parameters: dashboard.parameters,
      })),
      parameters: catalog.parameters.filter((widget) => used.has(widget.name)),
    };
    const text = [
      'Datasets (dataset_rows reads one, dataset_parameters gives its choices):',
      ...structured.datasets.map(
        (dataset) =>
          `- ${dataset.name} (${dataset.label}): ${dataset.description}. Parameters: ${dataset.parameters.join(', ') || 'none'}. Columns: ${dataset.columns.map((column) => `${column.name} ${column.type}${column.description ? ` (${column.description})` : ''}`).join(', ')}`,
      ),
      'Dashboards (the dashboard tool renders one):',
      ...structured.dashboards.map(
        (dashboard) =>
          `- ${dashboard.name} (${dashboard.label}, ${dashboard.format}): ${dashboard.description}. Parameters: ${dashboard.parameters.join(', ') || 'none'}`,
      ),
      'Parameters:',
      ...structured.parameters.map(widgetLine),
    ].join('\n');
    return { content: [{ type: 'text', text }], structuredContent: structured };
  }

  async datasetParameters(caller: Caller, args: Args): Promise<CallToolResult> {
    const name = args.dataset as string;
    const widgets: WidgetJson[] = await this.widgets.ofItem(
      'dataset',
      name,
      caller,
      selectionRequest(args.selections),
    );
    return {
      content: [{ type: 'text', text: widgets.map(widgetLine).join('\n') || 'No parameters.' }],
      structuredContent: { dataset: name, parameters: widgets },
    };
  }

  /**
   * A page of a dataset's rows, read by the results reader as the HTTP read's are (the same cache entries
   * and single flight); `address` is the client's over HTTP, whose slots an anonymous caller's uncached
   * query takes.
   */
  async datasetRows(caller: Caller, args: Args, address?: string): Promise<CallToolResult> {
    const name = args.dataset as string;
    const request = selectionRequest(args.selections);
    const window = this.window(args);
    const rows = await this.datasets.rows(
      caller,
      name,
      request,
      { ...window, columns: Array.isArray(args.columns) ? (args.columns as string[]) : [] },
      address,
    );
    return pageResult(rows, window.offset, 'dataset_rows');
  }

  async queryModels(caller: Caller, args: Args): Promise<CallToolResult> {
    // The one rule of who is an administrator (core/caller.ts), as @AdminOnly() applies it over HTTP.
    const admin = asAdministrator(caller);
    if (admin === null) throw new ForbiddenError('This endpoint is for administrators');
    const window = this.window(args);
    const result = await this.queryModelsService.query(admin, {
      sql: args.sql as string,
      selections: emptyParameterRequest(),
      options: { orientation: 'rows', select: [], ...window },
    });
    return pageResult(
      {
        columns: result.schema.fields,
        rows: result.data as unknown[][],
        total: result.total_num_rows,
      },
      window.offset,
      'query_models',
    );
  }

  /**
   * `limit` and `offset`, with the MCP server's own default and cap (MCP_DEFAULT_ROWS, MCP_MAX_ROWS, and
   * never past MAX_RESULT_ROWS, the cap of every answer).
   */
  private window(args: Args): { limit: number; offset: number } {
    const max = Math.min(this.config.mcpRows.max, this.config.maxResultRows);
    const fallback = Math.min(this.config.mcpRows.default, max);
    const limit = args.limit ?? fallback;
    const offset = args.offset ?? 0;
    if (!Number.isInteger(limit) || (limit as number) < 0 || (limit as number) > max) {
      throw new InvalidRequestError(`limit must be a whole number from 0 to ${max}`);
    }
    if (!Number.isSafeInteger(offset) || (offset as number) < 0) {
      throw new InvalidRequestError('offset must be a whole number from 0 up');
    }
    return { limit: limit as number, offset: offset as number };
  }
}

/**
 * The selections of a tool call as a POST body of the current layout gives them. The paging built-ins are
 * the tool's own arguments, so a selection named like one (`x_...`) is refused rather than read as one.
 */
export function selectionRequest(selections: unknown): ParameterRequest {
  if (selections === undefined) return emptyParameterRequest();
  if (typeof selections !== 'object' || selections === null || Array.isArray(selections)) {
    throw new InvalidRequestError('selections must be an object of parameter selections by name');
  }
  const builtin = Object.keys(selections).find((name) => name.startsWith('x_'));
  if (builtin !== undefined) {
    throw new InvalidRequestError(
      `selections takes parameters only, not "${builtin}": limit, offset and columns are the tool's own arguments`,
    );
  }
  return parseBodySelections(selections);
}

/** A page of rows, with its columns and the total of rows it is cut from. */
interface RowsPage {
  columns: { name: string; type: string }[];
  /** The database's own type of each column, where known: the text prints decimals at their scale. */
  databaseTypes?: string[];
  rows: unknown[][];
  total: number;
}

/**
 * The page's rows with each decimal as text at its scale (2320.80, as the CSV export has it), for the text
 * copy only: the structured rows keep JSON numbers.
 */
function printedDecimals(page: RowsPage): unknown[][] {
  const printers = decimalPrinters(
    page.columns.map((column, index) => ({ ...column, databaseType: page.databaseTypes?.[index] })),
  );
  if (printers.every((printer) => printer === undefined)) return page.rows;
  return page.rows.map((row) =>
    row.map((value, index) => {
      const printer = printers[index];
      return printer && typeof value === 'number' ? printer(value) : value;
    }),
  );
}

/** A page of rows as the tool answers it: structured rows, a table and a paging note. */
function pageResult(page: RowsPage, offset: number, tool: string): CallToolResult {
  const { rows, total } = page;
  const end = offset + rows.length;
  const nextOffset = end < total && rows.length > 0 ? end : null;
  // Names and types only: the catalog describes the columns once, a page does not repeat it.
  const columns = page.columns.map(({ name, type }) => ({ name, type }));
  const note = pageNote({ offset, returned: rows.length, total, nextOffset, tool });
  return {
    content: [
      {
        type: 'text',
        text: `${rowsTable(
          columns.map((column) => column.name),
          printedDecimals(page),
        )}\n(${note})`,
      },
    ],
    structuredContent: {
      columns,
      rows,
      total_rows: total,
      offset,
      left_out: total - rows.length,
      next_offset: nextOffset,
    },
  };
}
