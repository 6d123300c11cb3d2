import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentCaller, OptionalAuth } from '@/common/access.decorators';
import { FastRoute } from '@/common/fast-route/fast-route.decorator';
import type { Caller } from '@/core/caller';
import { ApiDatasetResult, ApiLegacyErrors, ApiProjectPath, ApiToken } from '@/common/api-docs';
import { BODY_ERRORS, COMMON_ERRORS } from '@/common/api-schemas';
import { LEGACY } from '@/common/routes';
import { DatasetsService } from '@/datasets/datasets.service';
import { toHttp } from '@/datasets/result-reply';
import { CONTENT_TYPES, negotiateFormat } from '@/datasets/stream-formats';
import { parseBodySelections, parseQuerySelections } from '@/core/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

/** Same replies as the current layout (ETag, 304, CSV and NDJSON exports), in the legacy shape. */
@ApiTags('legacy')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@ApiProduces(CONTENT_TYPES.json, CONTENT_TYPES.csv, CONTENT_TYPES.ndjson)
@ApiLegacyErrors(...COMMON_ERRORS, 400, 403)
@Controller(LEGACY)
export class DatasetsLegacyController {
  constructor(private readonly datasets: DatasetsService) {}

  /** Every row of a dataset as records, with the schema's `dimensions`. */
  @Get('dataset/:name')
  @FastRoute()
  @ApiDatasetResult('legacy', true)
  async results(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Query() query: RawQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string | globalThis.Response> {
    const request = parseQuerySelections(query, 'legacy');
    const wants = { format: negotiateFormat(accept), ifNoneMatch };
    return toHttp(await this.datasets.reply(caller, name, request, wants), response);
  }

  @Post('dataset/:name')
  @HttpCode(200)
  @ApiDatasetResult('legacy', false)
  @ApiLegacyErrors(...BODY_ERRORS)
  @ApiBody({ schema: { type: 'object', additionalProperties: true } })
  async resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Body() body: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string | globalThis.Response> {
    const request = parseBodySelections(body, 'legacy');
    const wants = { format: negotiateFormat(accept) };
    return toHttp(await this.datasets.reply(caller, name, request, wants), response);
  }
}
