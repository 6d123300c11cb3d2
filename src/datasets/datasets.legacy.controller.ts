import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/auth/auth.decorators';
import type { Caller } from '@/auth/caller';
import { ApiProjectPath, ApiToken } from '@/common/api-docs';
import { LEGACY } from '@/common/routes';
import { DatasetsService } from '@/datasets/datasets.service';
import { parseBodySelections, parseQuerySelections } from '@/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

@ApiTags('legacy')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@Controller(LEGACY)
export class DatasetsLegacyController {
  constructor(private readonly datasets: DatasetsService) {}

  /** Every row of a dataset as records, with the schema's `dimensions`. */
  @Get('dataset/:name')
  results(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Query() query: RawQuery,
  ): Promise<object> {
    return this.datasets.legacyResults(caller, name, parseQuerySelections(query, 'legacy'));
  }

  @Post('dataset/:name')
  @HttpCode(200)
  @ApiBody({ schema: { type: 'object', additionalProperties: true } })
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<object> {
    return this.datasets.legacyResults(caller, name, parseBodySelections(body, 'legacy'));
  }
}
