import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import { ApiBody, ApiHeader, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { QueryModelsService } from '@/admin/query-models.service';
import { AdminOnly, CurrentAdmin } from '@/http/access/access.decorators';
import type { AdminCaller } from '@/core/caller';
import { toBuildJson } from '@/builds/builds.mapper';
import { BuildsService } from '@/builds/builds.service';
import { ApiEmpty, ApiErrors, ApiJson, ApiProjectPath, ApiToken } from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS, ref } from '@/openapi/common-schemas';
import { HttpReply } from '@/http/reply/http-reply';
import { prefersAsync } from '@/http/request/prefer';
import { ServedProject } from '@/core/project/served-project';
import { CURRENT, currentPath } from '@/http/routes';
import type { DatasetResult } from '@/datasets/results/result-shape';
import { InvalidRequestError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { queryModelsFromBody, queryModelsFromQuery } from '@/admin/query-models.request';
import { QueryModelsBodyDto } from '@/admin/dto/query-models-body.dto';
import { ValidateDtos } from '@/http/input/validation';

@ApiTags('admin')
@ApiProjectPath()
@ApiToken()
@AdminOnly()
@ApiErrors(...COMMON_ERRORS, 403)
@Controller(CURRENT)
export class AdminController {
  /** The served project's prefix, for `Location`: fixed at start (a build may not rename the project). */
  private readonly prefix: string;

  constructor(
    private readonly builds: BuildsService,
    private readonly queryModels: QueryModelsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    served: ServedProject,
  ) {
    this.prefix = currentPath(served.current);
  }

  /**
   * Rebuilds the virtual data environment and waits for it (empty body). With `Prefer: respond-async`
   * (RFC 7240) it answers at once instead: 202 with `Preference-Applied: respond-async`, the build's run
   * (its `id`, `status` and `progress`) and, in `Location`, `GET P/builds/{id}`, which follows it to its end.
   * 400 `build_in_progress` while another build is queued or running on any server process. Waiting: 400
   * `invalid_project` when the project made it fail (its SQL, its files: the message names the model, the
   * file, line and column), 500 `build_failed` when something it needed failed (a source, a disk), 503
   * `build_interrupted` when the server is stopped (SIGTERM, SIGINT) before the build is done.
   */
  @Post('build')
  @HttpCode(200)
  @ApiEmpty('Built')
  @ApiHeader({
    name: 'Prefer',
    required: false,
    description: '`respond-async`: answer 202 at once, with the build to follow at `Location`',
  })
  @ApiResponse({
    status: 202,
    description:
      'Queued (with `Prefer: respond-async`): the run, to follow at `Location` (`GET P/builds/{id}`)',
    headers: {
      Location: { description: 'GET P/builds/{id}: the run', schema: { type: 'string' } },
      'Preference-Applied': { schema: { type: 'string', enum: ['respond-async'] } },
    },
    content: { 'application/json': { schema: ref('BuildRun') } },
  })
  @ApiErrors(...BODY_ERRORS)
  async build(
    @CurrentAdmin() caller: AdminCaller,
    @Headers('prefer') prefer?: string,
  ): Promise<HttpReply | undefined> {
    if (!prefersAsync(prefer)) {
      await this.builds.build(caller);
      return undefined;
    }
    const run = await this.builds.start(caller);
    return new HttpReply(
      202,
      {
        'Content-Type': 'application/json; charset=utf-8',
        Location: `${this.prefix}/builds/${run.id}`,
        'Preference-Applied': 'respond-async',
      },
      JSON.stringify(toBuildJson(run, [])),
    );
  }

  /**
   * One build of the history (`Location` of an asynchronous `POST P/build`): its status, its progress
   * while it runs, how it ended. 404 for an id of no build of this project.
   */
  @Get('builds/:build')
  @ApiJson('BuildRun', 'The build')
  @ApiErrors(404)
  async run(
    @Param('build', new ParseUUIDPipe({ version: 'all' })) id: string,
  ): Promise<Record<string, unknown>> {
    const { run, notifications } = await this.builds.find(id);
    return toBuildJson(run, notifications);
  }

  /**
   * Build history, newest first: status, what started it (`trigger`), times, error, rows and duration per
   * model, and the deliveries of its event to the deployment's webhooks.
   */
  @Get('builds')
  @ApiJson('BuildRun', 'Builds, newest first', true)
  async history(): Promise<Record<string, unknown>[]> {
    return (await this.builds.history()).map(({ run, notifications }) =>
      toBuildJson(run, notifications),
    );
  }

  /**
   * The query-string form of query-models as a GET (the b-era service's, which Squirrels Studio calls):
   * `x_sql_query` with x_orientation, x_limit, x_offset and selections.
   */
  @Get('query-models')
  @ApiJson('DatasetResult', 'The query result')
  @ApiErrors(400)
  @ApiQuery({ name: 'x_sql_query', required: true, type: String })
  queryModelsGet(
    @CurrentAdmin() caller: AdminCaller,
    @Query() query: Record<string, string | string[] | undefined>,
  ): Promise<DatasetResult> {
    return this.queryModels.query(caller, queryModelsFromQuery(query, this.config.maxResultRows));
  }

  /**
   * Runs read-only SQL over the models. Either `x_sql_query` in the query string (with x_orientation,
   * x_limit, x_offset and selections), or a JSON body `{sql_query, parameters, x_orientation, x_limit,
   * x_offset}`. Writes, ATTACH, INSTALL, COPY, PRAGMA, files, network, and what shows the server rather
   * than the models (`duckdb_settings()`, `current_setting()`, `duckdb_databases()`, ...) are 400
   * `invalid_sql`; the catalog of the models (`duckdb_tables()`, `duckdb_columns()`, `information_schema`,
   * `DESCRIBE`, `SHOW TABLES`) is readable. Past the time limit: 400 `query_timeout`; past the engine's
   * memory limit: 400 `query_too_large`.
   */
  @Post('query-models')
  @ValidateDtos('ignore')
  @HttpCode(200)
  @ApiJson('DatasetResult', 'The query result')
  @ApiErrors(...BODY_ERRORS)
  @ApiQuery({ name: 'x_sql_query', required: false, type: String })
  @ApiBody({
    required: false,
    schema: {
      type: 'object',
      properties: {
        sql_query: { type: 'string' },
        parameters: { type: 'object', additionalProperties: true },
        x_orientation: { type: 'string', enum: ['records', 'rows', 'columns'] },
        x_limit: { type: 'integer' },
        x_offset: { type: 'integer' },
      },
    },
  })
  queryModelsPost(
    @CurrentAdmin() caller: AdminCaller,
    @Query() query: Record<string, string | string[] | undefined>,
    @Body() body: QueryModelsBodyDto,
    @Req() request: Request,
  ): Promise<DatasetResult> {
    const json = request.is('application/json') !== false;
    const maxRows = this.config.maxResultRows;
    if (query.x_sql_query === undefined && json) {
      return this.queryModels.query(caller, queryModelsFromBody(body, maxRows));
    }
    // Both forms at once: the body was silently ignored (the fuzzer's x_limit above the maximum passed).
    // The body as sent: the DTO has dropped the keys it does not declare.
    const sent: unknown = request.body;
    if (json && typeof sent === 'object' && sent !== null && Object.keys(sent).length > 0) {
      throw new InvalidRequestError(
        'Send the query either in the query string (x_sql_query) or as a JSON body (sql_query), not both',
      );
    }
    return this.queryModels.query(caller, queryModelsFromQuery(query, maxRows));
  }
}
