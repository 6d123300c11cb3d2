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
import { ApiErrors, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { BODY_ERRORS, COMMON_ERRORS } from '@/common/api-schemas';
import { CURRENT } from '@/common/routes';
import { DashboardsService } from '@/dashboards/dashboards.service';
import { DashboardResult, toDashboardFile } from '@/dashboards/rendered.mapper';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

const SELECTIONS_BODY = {
  schema: {
    type: 'object',
    additionalProperties: true,
    description: 'Parameter selections by name, plus x_verify_params',
  },
};

@ApiTags('dashboards')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@ApiErrors(...COMMON_ERRORS, 400, 403)
@Controller(CURRENT)
export class DashboardsController {
  constructor(private readonly dashboards: DashboardsService) {}

  /** The dashboard for the given selections: an HTML page or a PNG image; its scope decides who may ask. */
  @Get('dashboards/:dashboard/results')
  @DashboardResult()
  async results(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Query() query: RawQuery,
  ): Promise<StreamableFile> {
    return toDashboardFile(
      await this.dashboards.render(caller, name, parseQuerySelections(query, 'current')),
    );
  }

  @Post('dashboards/:dashboard/results')
  @HttpCode(200)
  @ApiErrors(...BODY_ERRORS)
  @DashboardResult()
  @ApiBody(SELECTIONS_BODY)
  async resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Body() body: unknown,
  ): Promise<StreamableFile> {
    return toDashboardFile(
      await this.dashboards.render(caller, name, parseBodySelections(body, 'current')),
    );
  }
}
