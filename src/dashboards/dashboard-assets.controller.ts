import { Controller, Get, Headers } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { NoAuth } from '@/http/access/access.decorators';
import { HttpReply, KeptScript } from '@/http/reply/http-reply';
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
  private readonly script = new KeptScript(chartJsSource());

  @Get(CHART_JS_ROUTE)
  chartJs(@Headers('if-none-match') ifNoneMatch?: string): HttpReply {
    return this.script.reply(ifNoneMatch);
  }
}
