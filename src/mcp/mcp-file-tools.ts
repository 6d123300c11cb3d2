import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { APP_CONFIG, AppConfig } from '@/config/config';
import type { Caller } from '@/core/caller';
import { refuseEmbedded } from '@/core/embedding/embed-request';
import { InvalidRequestError } from '@/core/errors';
import { ServedProject } from '@/core/project/served-project';
import { DashboardsService } from '@/dashboards/dashboards.service';
import { CHART_JS_ROUTE, withChartJsFrom } from '@/dashboards/template/page-layout';
import { DatasetsService } from '@/datasets/datasets.service';
import { ExportLinks } from '@/datasets/export-links';
import { currentPath } from '@/http/routes';
import { EXPORT_LINK_FORMATS } from '@/mcp/mcp-schemas';
import { selectionRequest } from '@/mcp/mcp-tools';

type Args = Record<string, unknown>;

/**
 * The tools that hand an assistant a file rather than rows: a link to a dataset's whole export, a dashboard
 * as an image or a page. Apart from McpTools (the catalog, parameters and rows) since both answer within
 * what an assistant can take by pointing past the answer: a link, Drey's Chart.js, the dashboard's URL,
 * each built on `base`, the origin the MCP request reached.
 */
@Injectable()
export class McpFileTools {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly dashboards: DashboardsService,
    private readonly links: ExportLinks,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get dashboardHtmlMaxBytes(): number {
    return this.config.mcpDashboardHtmlMaxBytes;
  }

  get exportLinkMinutes(): number {
    return this.config.mcpExportLinkMinutes;
  }

  /**
   * A short-lived link to the whole export of a dataset (ExportLinks), for a result larger than an
   * assistant takes in rows: checked now as the export over HTTP is (the dataset, the caller's scope, the
   * selections, the columns: one read of no rows, which also gives the total), fetched later without a
   * header. `base` is the origin the MCP request reached (scheme and Host, as McpProtectedResource builds
   * its URLs); over stdio there is none, and no link to give.
   */
  async datasetExport(
    caller: Caller,
    args: Args,
    address?: string,
    base?: string,
  ): Promise<CallToolResult> {
    refuseEmbedded(caller, 'export links');
    const name = args.dataset as string;
    const format = args.format ?? 'csv';
    if (!isLinkFormat(format)) {
      throw new InvalidRequestError(`format must be one of ${EXPORT_LINK_FORMATS.join(', ')}`);
    }
    if (base === undefined) {
      throw new InvalidRequestError(
        'dataset_export answers a link to the HTTP service: call it over HTTP (P/mcp), not over stdio',
      );
    }
    const selections = (args.selections ?? {}) as Record<string, unknown>;
    const columns = Array.isArray(args.columns) ? (args.columns as string[]) : [];
    const checked = await this.datasets.rows(
      caller,
      name,
      selectionRequest(args.selections),
      { limit: 0, offset: 0, columns },
      address,
    );
    const body = {
      ...selections,
      x_format: format,
      ...(columns.length > 0 ? { x_select: columns } : {}),
    };
    const link = await this.links.issue(caller, name, body);
    const path = `${currentPath(this.served.current)}/datasets/${encodeURIComponent(name)}/export-link`;
    const url = `${base}${path}?token=${link.token}`;
    const structured = {
      dataset: name,
      format,
      url,
      expires_at: link.expiresAt.toISOString(),
      total_rows: checked.total,
    };
    return {
      content: [
        {
          type: 'text',
          text: `The ${format} export of ${name} (${checked.total} rows): ${url}\nFetch it with a plain GET, no header needed, before ${structured.expires_at}; the link is a credential: share it only with whoever may read the data.`,
        },
      ],
      structuredContent: structured,
    };
  }

  /**
   * A dashboard as an assistant can take it: a PNG by default, whatever the dashboard's own format (an
   * HTML dashboard drawn by the same renderer as PNG dashboards), or with `format: "html"` its page as text,
   * with Chart.js loaded from Drey (`base`: the origin the MCP request reached) rather than inlined, up to
   * MCP_DASHBOARD_HTML_MAX_BYTES. A larger page is not cut (half a page is no page): the answer says so
   * and gives the dashboard's HTTP URL. Over stdio there is no origin to load Chart.js from: HTML is refused.
   */
  async dashboard(caller: Caller, args: Args, base?: string): Promise<CallToolResult> {
    const name = args.dashboard as string;
    const format = args.format ?? 'png';
    if (format !== 'png' && format !== 'html') {
      throw new InvalidRequestError('format must be png or html');
    }
    if (format === 'html' && base === undefined) {
      throw new InvalidRequestError(
        'format html loads Chart.js from the HTTP service: over stdio, the dashboard tool answers PNG only',
      );
    }
    const reply = await this.dashboards.render(
      caller,
      name,
      selectionRequest(args.selections),
      undefined,
      format,
    );
    if (reply.kind !== 'body')
      throw new Error('A dashboard without If-None-Match was not modified');
    if (reply.format === 'png') {
      return {
        content: [{ type: 'image', data: reply.body.toString('base64'), mimeType: 'image/png' }],
        structuredContent: {
          dashboard: reply.name,
          format: reply.format,
          content_type: reply.contentType,
          bytes: reply.body.length,
        },
      };
    }
    const prefix = `${base as string}${currentPath(this.served.current)}`;
    const page = withChartJsFrom(reply.body.toString('utf8'), `${prefix}/${CHART_JS_ROUTE}`);
    const bytes = Buffer.byteLength(page);
    const cap = this.config.mcpDashboardHtmlMaxBytes;
    const structured = {
      dashboard: reply.name,
      format: reply.format,
      content_type: reply.contentType,
      bytes,
    };
    if (bytes <= cap) {
      return { content: [{ type: 'text', text: page }], structuredContent: structured };
    }
    const url = `${prefix}/dashboards/${encodeURIComponent(reply.name)}/results${selectionQuery(args.selections)}`;
    return {
      content: [
        {
          type: 'text',
          text: `The HTML page of ${reply.name} is ${bytes} bytes, over the ${cap} an answer carries (MCP_DASHBOARD_HTML_MAX_BYTES). Call dashboard without format for a PNG of it, or open it at ${url} (with your token as Authorization: Bearer).`,
        },
      ],
      structuredContent: { ...structured, over_cap: true, url },
    };
  }
}

function isLinkFormat(value: unknown): value is (typeof EXPORT_LINK_FORMATS)[number] {
  return (EXPORT_LINK_FORMATS as readonly unknown[]).includes(value);
}

/** Selections as the query of a GET (`?a=1&b=x&b=y`), for a URL an answer gives; '' for none. */
function selectionQuery(selections: unknown): string {
  const query = new URLSearchParams();
  if (typeof selections === 'object' && selections !== null) {
    for (const [name, value] of Object.entries(selections)) {
      for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) {
        query.append(name, typeof one === 'string' ? one : JSON.stringify(one));
      }
    }
  }
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}
