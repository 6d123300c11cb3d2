import { Controller, Get, Headers } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { createHash } from 'node:crypto';
import { NoAuth } from '@/http/access/access.decorators';
import { etagMatches } from '@/http/reply/content-coding';
import { HttpReply, KeptBody } from '@/http/reply/http-reply';
import { CURRENT } from '@/http/routes';
import { CHART_JS_ROUTE, chartJsSource } from '@/dashboards/template/page-layout';

/**
 * Chart.js as Drey ships it (the copy every page of the layout inlines), for the HTML pages the MCP tool
 * `dashboard` answers without it (withChartJsFrom): served by Drey itself, no CDN, open to everyone as a
 * library is. Sent as the ReDoc bundle is: an ETag, a day's caching, compressed once by the one writer.
 */
@ApiExcludeController()
@NoAuth()
@Controller(CURRENT)
export class DashboardAssetsController {
  private readonly script = new KeptBody({ body: Buffer.from(chartJsSource()) }, 'asset');
  private readonly tag = `"${createHash('sha1').update(this.script.kept.body).digest('base64url')}"`;

  @Get(CHART_JS_ROUTE)
  chartJs(@Headers('if-none-match') ifNoneMatch?: string): HttpReply {
    const headers = {
      'Content-Type': 'application/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=86400',
      ETag: this.tag,
      Vary: 'Accept-Encoding',
    };
    return etagMatches(ifNoneMatch, this.tag)
      ? new HttpReply(304, headers, null)
      : new HttpReply(200, headers, this.script);
  }
}
