import { Controller, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import { SignInRedirectFilter } from '@/sign-in/sign-in-redirect.filter';
import { IfNoneMatch } from '@/dashboards/if-none-match.decorator';
import { FastRoute } from '@/http/fast-route/fast-route.decorator';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiLegacyErrors,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { LEGACY_SELECTIONS, hyphensForUnderscores } from '@/legacy/selections';
import { LEGACY } from '@/legacy/routes';
import { Selections } from '@/http/input/selections.decorator';
import { DashboardsService } from '@/dashboards/dashboards.service';
import {
  DashboardNotModified,
  DashboardResult,
  toDashboardHttp,
} from '@/dashboards/dashboards.mapper';
import type { HttpReply } from '@/http/reply/http-reply';
import type { ParameterRequest } from '@/core/parameters/selection-request';

@ApiTags('legacy')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
// 429: a caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403, 429)
@Controller(LEGACY)
export class DashboardsLegacyController {
  constructor(private readonly dashboards: DashboardsService) {}

  /** The dashboard as HTML or PNG (its result_format); hyphens accepted for underscores. */
  @Get('dashboard/:name')
  // A browser opening a protected page signs in first and comes back (sign-in/).
  @UseFilters(SignInRedirectFilter)
  // A repeated page is the most frequent dashboard request: served like a cached dataset read.
  @FastRoute()
  @DashboardResult()
  @DashboardNotModified()
  @ApiSelections('legacyDashboardResults', 'get')
  async results(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
    @IfNoneMatch() ifNoneMatch: string | undefined,
  ): Promise<HttpReply> {
    const dashboard = hyphensForUnderscores(name);
    return toDashboardHttp(await this.dashboards.render(caller, dashboard, request, ifNoneMatch));
  }

  // The GET with the selections in a JSON body; a POST is not conditional (no 304).
  @Post('dashboard/:name')
  @HttpCode(200)
  @ApiLegacyErrors(...BODY_ERRORS)
  @DashboardResult()
  @ApiSelections('legacyDashboardResults', 'post')
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
  ): Promise<HttpReply> {
    return this.results(caller, name, request, undefined);
  }
}
