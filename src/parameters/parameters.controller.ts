import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/common/access.decorators';
import type { Caller } from '@/core/caller';
import { ApiErrors, ApiJson, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { BODY_ERRORS, COMMON_ERRORS } from '@/common/api-schemas';
import { CURRENT } from '@/common/routes';
import { ParameterWidgetsService } from '@/parameters/parameter-widgets.service';
import { toParametersResponse } from '@/parameters/parameters.mapper';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';

type RawQuery = Record<string, string | string[] | undefined>;
type Response = { parameters: WidgetJson[] };

const SELECTIONS_BODY = {
  schema: {
    type: 'object',
    description:
      'Parameter selections by name (string, array of ids, "YYYY-MM-DD", [start, end], number or string), plus x_parent_param and x_verify_params',
    additionalProperties: true,
  },
};

// Selections differ per dataset, so they are parsed by the parameters domain, not by DTOs.
@ApiTags('parameters')
@ApiProjectPath()
@ApiToken()
@ApiErrors(...COMMON_ERRORS, 400, 403)
@ApiJson('ParametersResponse', 'The parameters, evaluated with the selections')
@Controller(CURRENT)
export class ParametersController {
  constructor(private readonly widgets: ParameterWidgetsService) {}

  /** Every parameter of the project, evaluated with the given selections (cascading). */
  @Get('parameters')
  async project(@CurrentCaller() caller: Caller, @Query() query: RawQuery): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofProject(caller, parseQuerySelections(query, 'current')),
    );
  }

  @Post('parameters')
  @HttpCode(200)
  @ApiBody(SELECTIONS_BODY)
  @ApiErrors(...BODY_ERRORS)
  async projectPost(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofProject(caller, parseBodySelections(body, 'current')),
    );
  }

  /** A dataset's parameters, evaluated with the given selections; its scope decides who may ask. */
  @OptionalAuth()
  @Get('datasets/:dataset/parameters')
  async dataset(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Query() query: RawQuery,
  ): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofItem('dataset', name, caller, parseQuerySelections(query, 'current')),
    );
  }

  @OptionalAuth()
  @Post('datasets/:dataset/parameters')
  @HttpCode(200)
  @ApiBody(SELECTIONS_BODY)
  @ApiErrors(...BODY_ERRORS)
  async datasetPost(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Body() body: unknown,
  ): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofItem('dataset', name, caller, parseBodySelections(body, 'current')),
    );
  }

  /** A dashboard's parameters, evaluated with the given selections; its scope decides who may ask. */
  @OptionalAuth()
  @Get('dashboards/:dashboard/parameters')
  async dashboard(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Query() query: RawQuery,
  ): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofItem('dashboard', name, caller, parseQuerySelections(query, 'current')),
    );
  }

  @OptionalAuth()
  @Post('dashboards/:dashboard/parameters')
  @HttpCode(200)
  @ApiBody(SELECTIONS_BODY)
  @ApiErrors(...BODY_ERRORS)
  async dashboardPost(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Body() body: unknown,
  ): Promise<Response> {
    return toParametersResponse(
      await this.widgets.ofItem('dashboard', name, caller, parseBodySelections(body, 'current')),
    );
  }
}
