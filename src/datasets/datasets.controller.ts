import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, NoAuth, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import {
  ApiDatasetResult,
  ApiErrors,
  ApiProjectPath,
  ApiOptionalToken,
  ApiSelections,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS, exportContent } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { FastRoute } from '@/http/fast-route/fast-route.decorator';
import { Selections } from '@/http/input/selections.decorator';
import { resultWants } from '@/datasets/datasets.mapper';
import { DatasetReplies } from '@/datasets/dataset-replies';
import type { ReplyWants } from '@/datasets/dataset-replies';
import type { HttpReply } from '@/http/reply/http-reply';
import { Wants } from '@/datasets/wants.decorator';
import { CONTENT_TYPES } from '@/datasets/results/stream-formats';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import { ClientAddress } from '@/http/request/client-address.decorator';
import { ExportLinks } from '@/datasets/export-links';

/**
 * Results are JSON, with an ETag (GET answers `If-None-Match` with 304); `Accept: text/csv` or
 * `application/x-ndjson` streams every row instead. Handlers return the whole reply (`HttpReply`) and take
 * no `@Res()`: the GET is a fast route, and one writer sends the reply on both paths.
 */
@ApiTags('datasets')
@ApiProjectPath()
@ApiOptionalToken()
@OptionalAuth()
@ApiProduces(CONTENT_TYPES.json, CONTENT_TYPES.csv, CONTENT_TYPES.ndjson)
// 429: a caller's concurrent uncached queries, exports or renders past CALLER_MAX_* (CallerSlots).
@ApiErrors(...COMMON_ERRORS, 400, 403, 406, 429)
@Controller(CURRENT)
export class DatasetsController {
  constructor(
    private readonly replies: DatasetReplies,
    private readonly links: ExportLinks,
  ) {}

  /** A dataset's rows for the given selections; x_orientation, x_select, x_limit, x_offset shape them. */
  @Get('datasets/:dataset/results')
  @FastRoute()
  @ApiDatasetResult('current', true)
  @ApiSelections('results', 'get')
  results(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Selections() request: ParameterRequest,
    @Wants(resultWants) wants: ReplyWants,
  ): Promise<HttpReply> {
    return this.replies.reply(caller, name, request, wants);
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
  ): Promise<HttpReply> {
    return this.results(caller, name, request, wants);
  }

  /**
   * The export a short-lived link of the MCP tool `dataset_export` stands for, fetched without any header
   * (docs/mcp.md): the link is the credential, so the route reads no other; its user is checked as they
   * are now. The token sits in the query, which the request log leaves out, as it does `x_embed_token`.
   */
  @Get('datasets/:dataset/export-link')
  @NoAuth()
  @ApiOperation({ summary: "A dataset's export, by a link of the MCP tool dataset_export" })
  @ApiQuery({ name: 'token', required: true, type: String })
  @ApiOkResponse({
    description:
      'The export the link stands for, as `x_format` answers it (`Content-Disposition: attachment`); a link that is expired, tampered with or whose user is gone is a 401 `invalid_token`',
    content: Object.fromEntries(
      Object.entries(exportContent()).filter(([type]) =>
        [CONTENT_TYPES.csv, CONTENT_TYPES.parquet, CONTENT_TYPES.xlsx].includes(type),
      ),
    ),
  })
  exportLink(
    @Param('dataset') name: string,
    @Query('token') token: unknown,
    @ClientAddress() address: string,
  ): Promise<HttpReply> {
    return this.links.open(name, token, address);
  }
}
