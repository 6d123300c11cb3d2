import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiJson } from '@/openapi/decorators';
import { ref } from '@/openapi/common-schemas';
import type { Response } from 'express';
import { NoAuth } from '@/http/access/access.decorators';
import { HealthService, Readiness } from '@/health/health.service';

@ApiTags('health')
// A query string that breaks the input limits is refused here too; an unexpected failure is a 500.
@ApiErrors(400, 500)
@NoAuth()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** The process is up and answering. */
  @Get('live')
  @ApiOkResponse({
    description: 'Up',
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'string', enum: ['ok'] } },
        },
      },
    },
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready to serve: the database, the queue's store, the project and its build, and the installation the
   * process started from (503 while any is down). The PNG renderer's check is `degraded`, never `down`.
   */
  @Get('ready')
  @ApiJson('Readiness', 'Ready')
  @ApiResponse({
    status: 503,
    description: 'Not ready, with `Retry-After`',
    content: { 'application/json': { schema: ref('Readiness') } },
  })
  async ready(@Res({ passthrough: true }) response: Response): Promise<Readiness> {
    const readiness = await this.health.readiness();
    if (readiness.status !== 'ready') response.status(503).setHeader('Retry-After', '5');
    return readiness;
  }

  /** The same as `/health/ready`, at the address people and monitors try first. */
  @Get()
  @ApiJson('Readiness', 'Ready')
  @ApiResponse({
    status: 503,
    description: 'Not ready, with `Retry-After`',
    content: { 'application/json': { schema: ref('Readiness') } },
  })
  readiness(@Res({ passthrough: true }) response: Response): Promise<Readiness> {
    return this.ready(response);
  }
}
