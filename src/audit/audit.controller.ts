import { Controller, Get, Query } from '@nestjs/common';
import { ValidateDtos } from '@/http/input/validation';
import { ApiTags } from '@nestjs/swagger';
import { toAuditJson } from '@/audit/audit.mapper';
import { AuditService } from '@/audit/audit.service';
import { AuditQueryDto } from '@/audit/dto/audit-query.dto';
import { AdminOnly } from '@/http/access/access.decorators';
import { ApiErrors, ApiJson, ApiProjectPath, ApiToken } from '@/openapi/decorators';
import { COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';

@ApiTags('admin')
@ApiProjectPath()
@ApiToken()
@AdminOnly()
@ValidateDtos()
@Controller(CURRENT)
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  /** The audit log, newest first: logins, tokens, user changes, builds, query-models (administrators). */
  @Get('audit')
  @ApiJson('AuditPage', 'A page of events')
  @ApiErrors(...COMMON_ERRORS, 400, 403)
  async list(@Query() query: AuditQueryDto): Promise<Record<string, unknown>> {
    const offset = query.offset ?? 0;
    const page = await this.audit.list({
      actor: query.actor,
      action: query.action,
      outcome: query.outcome,
      since: query.since ? new Date(query.since) : undefined,
      until: query.until ? new Date(query.until) : undefined,
      limit: query.limit ?? 100,
      offset,
    });
    return {
      events: page.events.map(toAuditJson),
      next_offset: page.hasMore ? offset + page.events.length : null,
    };
  }
}
