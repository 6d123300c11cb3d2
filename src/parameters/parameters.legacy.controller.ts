import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/common/access.decorators';
import type { Caller } from '@/core/caller';
import { ApiJson, ApiLegacyErrors, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { BODY_ERRORS, COMMON_ERRORS } from '@/common/api-schemas';
import { LEGACY } from '@/common/routes';
import { ParameterWidgetsService } from '@/parameters/parameter-widgets.service';
import { toLegacyParametersResponse } from '@/parameters/parameters.mapper';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;
type Response = { parameters: object[] };
const BODY = {
  schema: { type: 'object', additionalProperties: true, description: 'At most one selection' },
};

@ApiTags('legacy')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403)
@ApiJson('LegacyParametersResponse', 'The parameters, evaluated with the selection')
@Controller(LEGACY)
export class ParametersLegacyController {
  constructor(private readonly widgets: ParameterWidgetsService) {}

  /** A dataset's parameters (at most one selection; hyphens accepted for underscores). */
  @Get('dataset/:name/parameters')
  async dataset(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Query() query: RawQuery,
  ): Promise<Response> {
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dataset', name, caller, parseQuerySelections(query, 'legacy')),
    );
  }

  @Post('dataset/:name/parameters')
  @HttpCode(200)
  @ApiBody(BODY)
  @ApiLegacyErrors(...BODY_ERRORS)
  async datasetPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<Response> {
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dataset', name, caller, parseBodySelections(body, 'legacy')),
    );
  }

  /** A dashboard's parameters (at most one selection; hyphens accepted for underscores). */
  @Get('dashboard/:name/parameters')
  async dashboard(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Query() query: RawQuery,
  ): Promise<Response> {
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dashboard', name, caller, parseQuerySelections(query, 'legacy')),
    );
  }

  @Post('dashboard/:name/parameters')
  @HttpCode(200)
  @ApiBody(BODY)
  @ApiLegacyErrors(...BODY_ERRORS)
  async dashboardPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<Response> {
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dashboard', name, caller, parseBodySelections(body, 'legacy')),
    );
  }
}
