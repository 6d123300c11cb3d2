import type { ExternalConnections } from '@/engine/connections/connection-registry';
import { NotAQueryError, QueryLimits, runDuckdbQuery } from '@/engine/duckdb/duckdb-query';
import { RowBatch, rowsBatch, streamDuckdbQuery } from '@/engine/duckdb/duckdb-stream';
import type { Environment } from '@/engine/environment/environment';
import {
  composeAdhoc,
  ComposedQuery,
  renderBuiltSql,
  RequestValues,
} from '@/engine/query/model-sql';
import { JsonValue, QueryResult, RowWindow, rowObjects } from '@/engine/sql/query-result';
import { DomainError, ModelFailedError } from '@/core/errors';
import { TemplateRenderError } from '@/engine/templating/sql-renderer';
import { TemplateUseError } from '@/engine/templating/binder';
import type { Project } from '@/core/project/project';
import { checkAdhocSql } from '@/engine/query/adhoc-guard';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The project's own statement (a model's, a parameter's query) on a connection the environment keeps: a
 * truncated result may have been streamed and left open (see runDuckdbQuery), so its connection is closed.
 */
function onEnvironment(
  environment: Environment,
  sql: string,
  binds: ComposedQuery['binds'],
  limits: QueryLimits,
): Promise<QueryResult> {
  return environment.withConnection(
    (connection) => runDuckdbQuery(connection, sql, binds, limits),
    (result) => !result.truncated,
  );
}

/** Runs a composed model query where it belongs: the environment, or its external connection. */
export async function runComposed(
  model: string,
  composed: ComposedQuery,
  useEnvironment: (
    work: (environment: Environment) => Promise<QueryResult>,
  ) => Promise<QueryResult>,
  connections: ExternalConnections,
  limits: QueryLimits,
): Promise<QueryResult> {
  try {
    const { target, sql, binds } = composed;
    if (target.kind === 'connection') {
      return await connections.get(target.connection).query(sql, binds, limits);
    }
    return await useEnvironment((environment) => onEnvironment(environment, sql, binds, limits));
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new ModelFailedError(model, messageOf(error));
  }
}

/**
 * The rows of `window` of a composed query: the statement as a subquery under `LIMIT $n OFFSET $m`, both
 * bound like the selections (the SQL text is the same for every page, so the driver prepares one shape).
 * Pages agree with each other only as far as the statement fixes its order (an ORDER BY on a unique key):
 * each page is a run of its own (docs/performance.md).
 * Written for both DuckDB and Postgres, which read `$n` placeholders and this clause alike.
 */
export function windowQuery(composed: ComposedQuery, window: RowWindow): ComposedQuery {
  const next = composed.binds.length + 1;
  return {
    target: composed.target,
    sql: `SELECT * FROM (\n${composed.sql}\n) AS drey_window LIMIT $${next} OFFSET $${next + 1}`,
    binds: [
      ...composed.binds,
      { type: 'integer', value: window.limit },
      { type: 'integer', value: window.offset },
    ],
    parts: [],
  };
}

/** The number of rows a composed query yields, counted by the database without reading them. */
export function countQuery(composed: ComposedQuery): ComposedQuery {
  return {
    target: composed.target,
    sql: `SELECT count(*) AS total FROM (\n${composed.sql}\n) AS drey_count`,
    binds: composed.binds,
    parts: [],
  };
}

/**
 * Streams a composed model query chunk by chunk on an environment the caller holds. A query on an external
 * connection is read whole (bounded by the row limit) and yielded as one batch.
 */
export async function* streamComposed(
  model: string,
  composed: ComposedQuery,
  environment: Environment,
  connections: ExternalConnections,
  limits: QueryLimits,
): AsyncGenerator<RowBatch> {
  try {
    const { target, sql, binds } = composed;
    if (target.kind === 'connection') {
      const result = await connections.get(target.connection).query(sql, binds, limits);
      yield rowsBatch(result.columns, result.rows);
      return;
    }
    const connection = await environment.connect();
    try {
      yield* streamDuckdbQuery(connection, sql, binds, limits.timeoutMs);
    } finally {
      connection.closeSync();
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new ModelFailedError(model, messageOf(error));
  }
}

/**
 * SQL computed once for everyone over the built tables (a parameter's option or bounds query), on a given
 * environment: during a build, the new one before it is switched in. Rows come as objects.
 */
export async function queryBuilt(
  project: Project,
  environment: Environment,
  sqlTemplate: string,
  limits: QueryLimits,
  file = 'query',
): Promise<Record<string, JsonValue>[]> {
  const { sql, binds } = renderBuiltSql(project, file, sqlTemplate, 'this query');
  const result = await onEnvironment(environment, sql, binds, limits);
  return rowObjects(result);
}

/**
 * Arbitrary SQL from a request over the built tables and the runtime models it names (evaluated with the
 * request's selections). Only one SELECT, which may not read the server's settings, paths or files
 * ({@link checkAdhocSql}); the read-only, no-external-access connection refuses the rest. Every refusal or
 * SQL error is an `invalid_sql` error carrying DuckDB's message; a query stopped by the time limit is
 * `query_timeout`, by the memory limit `query_too_large`.
 */
export async function queryAdhoc(
  project: Project,
  environment: Environment,
  sql: string,
  request: RequestValues,
  limits: QueryLimits,
): Promise<QueryResult> {
  const connection = await environment.connect();
  try {
    const statements = await connection.extractStatements(sql);
    if (statements.count !== 1) {
      throw new DomainError(
        'invalid_sql',
        `Send exactly one SQL statement, not ${statements.count}`,
      );
    }
    await checkAdhocSql(connection, sql);
    // Unquoted names are case-insensitive in DuckDB, as model names are matched here.
    const names = connection.getTableNames(sql, false).map((name) => name.toLowerCase());
    const dbviews = names.filter((name) =>
      project.models.some((m) => m.name === name && m.kind === 'dbview'),
    );
    if (dbviews.length > 0) {
      throw new DomainError(
        'invalid_sql',
        `dbview models run on their own database: ${dbviews.join(', ')}`,
      );
    }
    const composed = composeAdhoc(project, sql, names, request);
    return await runDuckdbQuery(connection, composed.sql, composed.binds, limits);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (
      error instanceof NotAQueryError ||
      error instanceof TemplateRenderError ||
      error instanceof TemplateUseError
    ) {
      throw new DomainError('invalid_sql', error.message);
    }
    const message = messageOf(error).replace(/^(?:Error: |Failed to extract statements: )+/, '');
    throw new DomainError('invalid_sql', message);
  } finally {
    connection.closeSync();
  }
}
