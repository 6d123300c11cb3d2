import { Controller, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import { SignInRedirectFilter } from '@/sign-in/sign-in-redirect.filter';
import { IfNoneMatch } from '@/dashboards/if-none-match.decorator';
import { FastRoute } from '@/http/fast-route/fast-route.decorator';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { ApiErrors, ApiProjectPath, ApiOptionalToken, ApiSelections } from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { Selections } from '@/http/input/selections.decorator';
import { DashboardsService } from '@/dashboards/dashboards.service';
import {
  DashboardNotModified,
  DashboardResult,
  toDashboardHttp,
} from '@/dashboards/dashboards.mapper';
import type { HttpReply } from '@/http/reply/http-reply';
import type { ParameterRequest } from '@/core/parameters/selection-request';

@ApiTags('dashboards')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
// 429: a caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
@ApiErrors(...COMMON_ERRORS, 400, 403, 429)
@Controller(CURRENT)
export class DashboardsController {
  constructor(private readonly dashboards: DashboardsService) {}

  /** The dashboard for the given selections: an HTML page or a PNG image; its scope decides who may ask. */
  @Get('dashboards/:dashboard/results')
  // A browser opening a protected page signs in first and comes back (sign-in/).
  @UseFilters(SignInRedirectFilter)
  // A repeated page is the most frequent dashboard request: served like a cached dataset read.
  @FastRoute()
  @DashboardResult()
  @DashboardNotModified()
  @ApiSelections('dashboardResults', 'get')
  async results(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Selections() request: ParameterRequest,
    @IfNoneMatch() ifNoneMatch: string | undefined,
  ): Promise<HttpReply> {
    return toDashboardHttp(await this.dashboards.render(caller, name, request, ifNoneMatch));
  }

  // The GET with the selections in a JSON body; a POST is not conditional (no 304).
  @Post('dashboards/:dashboard/results')
  @HttpCode(200)
  @ApiErrors(...BODY_ERRORS)
  @DashboardResult()
  @ApiSelections('dashboardResults', 'post')
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('dashboard') name: string,
    @Selections() request: ParameterRequest,
  ): Promise<HttpReply> {
    return this.results(caller, name, request, undefined);
  }
}
