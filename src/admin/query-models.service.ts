import { Injectable } from '@nestjs/common';
import { AuditService } from '@/audit/audit.service';
import type { AdminCaller } from '@/core/caller';
import { callerView } from '@/core/project/scope';
import { DomainError, InvalidRequestError } from '@/core/errors';
import type { ResultOptions } from '@/datasets/results/result-options';
import { DatasetResult, schemaFields, shapeResult } from '@/datasets/results/result-shape';
import { Engine } from '@/engine/engine';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import { SQL_REQUIRED } from '@/admin/dto/query-models-body.dto';

const MAX_SQL = 100_000;

/** A query-models request, parsed by the door it came through (HTTP's query string or body, MCP). */
export interface QueryModelsRequest {
  /** Read-only SQL over the models (see {@link checkSql}). */
  sql: string;
  /** Selections of the project's parameters, which runtime models are evaluated with. */
  selections: ParameterRequest;
  /** The page of the result answered, and its shape. */
  options: ResultOptions;
}

/** `sql` as a query-models request takes it: a string, not blank, of at most 100,000 characters. */
export function checkSql(sql: unknown): string {
  if (typeof sql !== 'string' || sql.trim() === '') {
    throw new InvalidRequestError(SQL_REQUIRED);
  }
  if (sql.length > MAX_SQL)
    throw new InvalidRequestError(`The SQL query is longer than ${MAX_SQL} characters`);
  return sql;
}

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
  ) {}

  /** Runs the request's SQL for an administrator: the page its options ask, shaped as they say. */
  async query(caller: AdminCaller, request: QueryModelsRequest): Promise<DatasetResult> {
    const sql = checkSql(request.sql);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const selections = catalog.selections(catalog.names(), request.selections, view);
    try {
      const result = await this.engine.runSql(sql, selections, view);
      await this.audit.recordBy(caller, 'query_models', null, { sql, rows: result.rows.length });
      return shapeResult(result, schemaFields(result), request.options);
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
