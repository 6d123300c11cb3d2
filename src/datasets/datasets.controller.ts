import { Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiDatasetResult,
  ApiErrors,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { FastRoute } from '@/http/fast-route/fast-route.decorator';
import { Selections } from '@/http/input/selections.decorator';
import { resultWants } from '@/datasets/datasets.mapper';
import { DatasetsService } from '@/datasets/datasets.service';
import { toHttp } from '@/datasets/results/result-reply';
import { Wants } from '@/datasets/wants.decorator';
import type { ReplyWants } from '@/datasets/datasets.service';
import { CONTENT_TYPES } from '@/datasets/results/stream-formats';
import type { ParameterRequest } from '@/core/parameters/selection-request';

/**
 * Results are JSON, with an ETag (GET answers `If-None-Match` with 304); `Accept: text/csv` or
 * `application/x-ndjson` streams every row instead. `@Res({ passthrough: true })` only sets the headers of
 * the JSON body: Nest still sends what the handler returns.
 */
@ApiTags('datasets')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
@ApiProduces(CONTENT_TYPES.json, CONTENT_TYPES.csv, CONTENT_TYPES.ndjson)
// 429: a caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
@ApiErrors(...COMMON_ERRORS, 400, 403, 429)
@Controller(CURRENT)
export class DatasetsController {
  constructor(private readonly datasets: DatasetsService) {}

  /** A dataset's rows for the given selections; x_orientation, x_select, x_limit, x_offset shape them. */
  @Get('datasets/:dataset/results')
  @FastRoute()
  @ApiDatasetResult('current', true)
  @ApiSelections('results', 'get')
  async results(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Selections() request: ParameterRequest,
    @Wants(resultWants) wants: ReplyWants,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string | globalThis.Response> {
    return toHttp(await this.datasets.reply(caller, name, request, wants), response);
  }

  // The GET with the selections in a JSON body; a POST is not conditional (no 304).
  @Post('datasets/:dataset/results')
  @HttpCode(200)
  @ApiDatasetResult('current', false)
  @ApiErrors(...BODY_ERRORS)
  @ApiSelections('results', 'post')
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Selections() request: ParameterRequest,
    @Wants(resultWants) wants: ReplyWants,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string | globalThis.Response> {
    return this.results(caller, name, request, wants, response);
  }
}
