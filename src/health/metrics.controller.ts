import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, Public } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { ApiErrors, ApiOptionalToken } from '@/openapi/decorators';
import { MetricsService } from '@/metrics/metrics.service';

@ApiTags('health')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /** Prometheus text format. Public when METRICS_PUBLIC=true, otherwise administrators only. */
  @Public()
  @ApiOptionalToken()
  @Get()
  @ApiOkResponse({
    description: 'The metrics',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiErrors(400, 401, 403, 500)
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  exposition(@CurrentCaller() caller: Caller): Promise<string> {
    return this.metrics.exposition(caller);
  }
}
