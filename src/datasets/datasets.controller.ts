import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { CurrentCaller, OptionalAuth } from '@/auth/auth.decorators';
import type { Caller } from '@/auth/caller';
import { ApiProjectPath, ApiToken } from '@/common/api-docs';
import { CURRENT } from '@/common/routes';
import { DatasetsService } from '@/datasets/datasets.service';
import type { DatasetResult } from '@/datasets/result-shape';
import { parseBodySelections, parseQuerySelections } from '@/parameters/selection-request';

type RawQuery = Record<string, string | string[] | undefined>;

const RESULTS_BODY = {
  schema: {
    type: 'object',
    additionalProperties: true,
    description:
      'Parameter selections by name, plus x_orientation (records|rows|columns), x_select (array), x_limit, x_offset, x_verify_params',
  },
};

@ApiTags('datasets')
@ApiProjectPath()
@ApiToken()
@OptionalAuth()
@Controller(CURRENT)
export class DatasetsController {
  constructor(private readonly datasets: DatasetsService) {}

  /** A dataset's rows for the given selections; x_orientation, x_select, x_limit, x_offset shape them. */
  @Get('datasets/:dataset/results')
  results(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Query() query: RawQuery,
  ): Promise<DatasetResult> {
    return this.datasets.results(caller, name, parseQuerySelections(query, 'current'));
  }

  @Post('datasets/:dataset/results')
  @HttpCode(200)
  @ApiBody(RESULTS_BODY)
  resultsPost(
    @CurrentCaller() caller: Caller,
    @Param('dataset') name: string,
    @Body() body: unknown,
  ): Promise<DatasetResult> {
    return this.datasets.results(caller, name, parseBodySelections(body, 'current'));
  }
}
