import { Inject, Injectable } from '@nestjs/common';
import { AuditService } from '@/audit/audit.service';
import type { AdminCaller } from '@/core/caller';
import { callerView } from '@/core/project/scope';
import { DomainError, InvalidRequestError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { parseResultOptions } from '@/datasets/results/result-options';
import { DatasetResult, schemaFields, shapeResult } from '@/datasets/results/result-shape';
import { Engine } from '@/engine/engine';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import {
  ParameterRequest,
  checkJsonBuiltins,
  parseBodySelections,
} from '@/core/parameters/selection-request';

const MAX_SQL = 100_000;

/**
 * `P/query-models`: read-only SQL over the built models and the runtime models evaluated with the given
 * selections. The engine runs it on a read-only connection without file or network access, under the
 * engine's memory limit; anything that writes, attaches, installs, reads files or reads the server
 * (settings, paths: `Engine.runSql` checks it) is `invalid_sql`, a query past the time limit
 * `query_timeout`, past the memory limit `query_too_large`.
 */
@Injectable()
export class QueryModelsService {
  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParameterCatalogService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The query-string form: `x_sql_query` with the built-ins and selections. */
  fromQuery(caller: AdminCaller, request: ParameterRequest): Promise<DatasetResult> {
    const sql = request.builtins.x_sql_query;
    return this.run(caller, Array.isArray(sql) && sql.length === 1 ? sql[0] : sql, request);
  }

  /** The JSON form: `sql_query` and `parameters`, plus the built-ins at the top level. */
  fromBody(caller: AdminCaller, body: unknown): Promise<DatasetResult> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequestError('The body must be a JSON object with sql_query');
    }
    const { sql_query: sql, parameters = {}, ...builtins } = body as Record<string, unknown>;
    checkJsonBuiltins(builtins);
    const request = parseBodySelections(parameters);
    return this.run(caller, sql, { ...request, builtins: { ...request.builtins, ...builtins } });
  }

  private async run(
    caller: AdminCaller,
    sql: unknown,
    request: ParameterRequest,
  ): Promise<DatasetResult> {
    if (typeof sql !== 'string' || sql.trim() === '') {
      throw new InvalidRequestError(
        'The SQL query is required (x_sql_query, or sql_query in a JSON body)',
      );
    }
    if (sql.length > MAX_SQL)
      throw new InvalidRequestError(`The SQL query is longer than ${MAX_SQL} characters`);
    const options = parseResultOptions(request.builtins, this.config.maxResultRows);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const selections = catalog.selections(catalog.names(), request, view);
    try {
      const result = await this.engine.runSql(sql, selections, view);
      await this.audit.recordBy(caller, 'query_models', null, { sql, rows: result.rows.length });
      return shapeResult(result, schemaFields(result), options);
    } catch (error) {
      const code = error instanceof DomainError ? error.code : 'internal_error';
      await this.audit.record({
        action: 'query_models',
        actor: caller.username,
        outcome: 'failure',
        details: { sql, error: code },
      });
      throw error;
    }
  }
}
