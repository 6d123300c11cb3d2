import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiJson,
  ApiLegacyErrors,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { LEGACY_SELECTIONS, hyphensForUnderscores } from '@/legacy/selections';
import { LEGACY } from '@/legacy/routes';
import { LEGACY_ITEM_PARAMETERS, toLegacyParametersResponse } from '@/legacy/parameters';
import { Selections } from '@/http/input/selections.decorator';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';

type Response = { parameters: object[] };
const PARAMETERS = 'LegacyParametersResponse';
const ANSWER = 'The parameters, evaluated with the selection (at most one)';

/**
 * Each GET has a POST twin that takes the selections as a JSON body and runs the GET's handler. `@ApiJson`
 * is on each handler, as in ParametersController.
 */
@ApiTags('legacy')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403)
@Controller(LEGACY)
export class ParametersLegacyController {
  constructor(private readonly widgets: ParameterWidgetsService) {}

  /** A dataset's parameters (at most one selection; hyphens accepted for underscores). */
  @Get('dataset/:name/parameters')
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('legacyParameters', 'get')
  async dataset(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
  ): Promise<Response> {
    const dataset = hyphensForUnderscores(name);
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dataset', dataset, caller, request, LEGACY_ITEM_PARAMETERS),
    );
  }

  @Post('dataset/:name/parameters')
  @HttpCode(200)
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('legacyParameters', 'post')
  @ApiLegacyErrors(...BODY_ERRORS)
  datasetPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
  ): Promise<Response> {
    return this.dataset(caller, name, request);
  }

  /** A dashboard's parameters (at most one selection; hyphens accepted for underscores). */
  @Get('dashboard/:name/parameters')
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('legacyParameters', 'get')
  async dashboard(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
  ): Promise<Response> {
    const dashboard = hyphensForUnderscores(name);
    return toLegacyParametersResponse(
      await this.widgets.ofItem('dashboard', dashboard, caller, request, LEGACY_ITEM_PARAMETERS),
    );
  }

  @Post('dashboard/:name/parameters')
  @HttpCode(200)
  @ApiJson(PARAMETERS, ANSWER)
  @ApiSelections('legacyParameters', 'post')
  @ApiLegacyErrors(...BODY_ERRORS)
  dashboardPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
  ): Promise<Response> {
    return this.dashboard(caller, name, request);
  }
}
