import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentCaller } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { CURRENT } from '@/http/routes';
import { ApiEmpty, ApiErrors, ApiProjectPath, ApiToken } from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { GrantRecordDto } from '@/oauth/dto/grant-record.dto';
import { GrantsService } from '@/oauth/grants.service';

/**
 * Assistants' access on a person's behalf (docs/mcp.md, "Signing in"): the grants of Drey's authorization
 * server, beside the person's named tokens (`P/tokens`).
 */
@ApiTags('authentication')
@ApiProjectPath()
@ApiErrors(...COMMON_ERRORS)
@Controller(CURRENT)
export class GrantsController {
  constructor(private readonly grants: GrantsService) {}

  /** The caller's grants to assistants; an administrator may name another user. */
  @ApiToken()
  @Get('grants')
  @ApiQuery({ name: 'username', required: false, type: String })
  @ApiOkResponse({ type: [GrantRecordDto] })
  @ApiErrors(403)
  list(
    @CurrentCaller() caller: Caller,
    @Query('username') username?: unknown,
  ): Promise<GrantRecordDto[]> {
    return this.grants.list(caller, typeof username === 'string' ? username : undefined);
  }

  /** Ends a grant and its tokens at once: the assistant's next call is refused. Empty body. */
  @ApiToken()
  @Delete('grants/:grant_id')
  @HttpCode(200)
  @ApiEmpty('Revoked')
  @ApiErrors(...BODY_ERRORS)
  async revoke(@CurrentCaller() caller: Caller, @Param('grant_id') grantId: string): Promise<void> {
    await this.grants.revoke(caller, grantId);
  }
}
