import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiErrors,
  ApiJson,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
  ApiToken,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { Selections } from '@/http/input/selections.decorator';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import { toParametersResponse } from '@/parameter-widgets/parameters.mapper';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';

type Response = { parameters: WidgetJson[] };

const PARAMETERS = 'ParametersResponse';
const ANSWER = 'The parameters, evaluated with the selections';

/**
 * Each GET has a POST twin that takes the selections as a JSON body (`@Selections()` reads either) and
 * runs the GET's handler. `@ApiJson` is on each handler, not the class: the Swagger plugin's own entry for
 * the handler's return type (a bare object) would stand in its place.
 */
@ApiTags('parameters')
@ApiProjectPath()
@ApiErrors(...COMMON_ERRORS, 400, 403)
@Controller(CURRENT)
export class ParametersController {
  constructor(private readonly widgets: ParameterWidgetsService) {}

  /** Every parameter of the project, evaluated with the given selections (cascading). */
  @ApiToken()
  @Get('parameters')
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'get')
  async project(
    @CurrentCaller() caller: Caller,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return toParametersResponse(await this.widgets.ofProject(caller, request));
  }

  @ApiToken()
  @Post('parameters')
  @HttpCode(200)
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'post')
  @ApiErrors(...BODY_ERRORS)
  projectPost(
    @CurrentCaller() caller: Caller,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return this.project(caller, request);
  }

  /** A dataset's parameters, evaluated with the given selections; its scope decides who may ask. */
  @OptionalAuth()
  @ApiOptionalToken()
  @Get('datasets/:dataset/parameters')
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'get')
  async dataset(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return toParametersResponse(await this.widgets.ofItem('dataset', name, caller, request));
  }

  @OptionalAuth()
  @ApiOptionalToken()
  @Post('datasets/:dataset/parameters')
  @HttpCode(200)
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'post')
  @ApiErrors(...BODY_ERRORS)
  datasetPost(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return this.dataset(caller, name, request);
  }

  /** A dashboard's parameters, evaluated with the given selections; its scope decides who may ask. */
  @OptionalAuth()
  @ApiOptionalToken()
  @Get('dashboards/:dashboard/parameters')
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'get')
  async dashboard(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return toParametersResponse(await this.widgets.ofItem('dashboard', name, caller, request));
  }

  @OptionalAuth()
  @ApiOptionalToken()
  @Post('dashboards/:dashboard/parameters')
  @HttpCode(200)
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('parameters', 'post')
  @ApiErrors(...BODY_ERRORS)
  dashboardPost(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Selections() request: ParameterRequest,
  ): Promise<Response> {
    return this.dashboard(caller, name, request);
  }
}
