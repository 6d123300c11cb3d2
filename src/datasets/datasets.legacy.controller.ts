import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiDatasetResult,
  ApiLegacyErrors,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { LEGACY_SELECTIONS, hyphensForUnderscores } from '@/legacy/selections';
import { LEGACY } from '@/legacy/routes';
import { FastRoute } from '@/http/fast-route/fast-route.decorator';
import { Selections } from '@/http/input/selections.decorator';
import { legacyResultWants } from '@/legacy/datasets';
import { DatasetReplies } from '@/datasets/dataset-replies';
import type { ReplyWants } from '@/datasets/dataset-replies';
import type { HttpReply } from '@/http/reply/http-reply';
import { Wants } from '@/datasets/wants.decorator';
import { CONTENT_TYPES } from '@/datasets/results/stream-formats';
import type { ParameterRequest } from '@/core/parameters/selection-request';

/** Same replies as the current layout (ETag, 304, CSV and NDJSON exports), in the legacy shape. */
@ApiTags('legacy')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
@ApiProduces(CONTENT_TYPES.json, CONTENT_TYPES.csv, CONTENT_TYPES.ndjson)
// 429: a caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403, 406, 429)
@Controller(LEGACY)
export class DatasetsLegacyController {
  constructor(private readonly replies: DatasetReplies) {}

  /** Every row of a dataset as records, with the schema's `dimensions`. */
  @Get('dataset/:name')
  @FastRoute()
  @ApiDatasetResult('legacy', true)
  @ApiSelections('legacyResults', 'get')
  results(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
    @Wants(legacyResultWants) wants: ReplyWants,
  ): Promise<HttpReply> {
    return this.replies.reply(caller, hyphensForUnderscores(name), request, wants);
  }

  // The GET with the selections in a JSON body; a POST is not conditional (no 304).
  @Post('dataset/:name')
  @HttpCode(200)
  @ApiDatasetResult('legacy', false)
  @ApiLegacyErrors(...BODY_ERRORS)
  @ApiSelections('legacyResults', 'post')
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Selections(LEGACY_SELECTIONS) request: ParameterRequest,
    @Wants(legacyResultWants) wants: ReplyWants,
  ): Promise<HttpReply> {
    return this.results(caller, name, request, wants);
  }
}
