import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  StreamableFile,
} from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/common/access.decorators';
import type { Caller } from '@/core/caller';
import { ApiLegacyErrors, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { BODY_ERRORS, COMMON_ERRORS } from '@/common/api-schemas';
import { LEGACY } from '@/common/routes';
import { DashboardsService } from '@/dashboards/dashboards.service';
import { DashboardResult, toDashboardFile } from '@/dashboards/rendered.mapper';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

@ApiTags('legacy')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403)
@Controller(LEGACY)
export class DashboardsLegacyController {
  constructor(private readonly dashboards: DashboardsService) {}

  /** The dashboard as HTML or PNG (its result_format); hyphens accepted for underscores. */
  @Get('dashboard/:name')
  @DashboardResult()
  async results(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Query() query: RawQuery,
  ): Promise<StreamableFile> {
    return toDashboardFile(
      await this.dashboards.render(caller, name, parseQuerySelections(query, 'legacy')),
    );
  }

  @Post('dashboard/:name')
  @HttpCode(200)
  @ApiLegacyErrors(...BODY_ERRORS)
  @DashboardResult()
  @ApiBody({ schema: { type: 'object', additionalProperties: true } })
  async resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<StreamableFile> {
    return toDashboardFile(
      await this.dashboards.render(caller, name, parseBodySelections(body, 'legacy')),
    );
  }
}
