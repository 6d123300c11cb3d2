import type { DuckDBConnection } from '@duckdb/node-api';
import { Pool, PoolClient } from 'pg';
import { DomainError } from '@/core/errors';
import type { ExternalConnection } from '@/engine/connections/external-connection';
import { postgresParameter, postgresType, TEXT_TYPES } from '@/engine/connections/postgres-types';
import type { QueryLimits } from '@/engine/duckdb/duckdb-query';
import type { JsonValue, QueryResult } from '@/engine/sql/query-result';
import { quoteIdentifier } from '@/engine/sql/sql-text';
import type { BoundValue } from '@/engine/sql/bound-value';
import type { ColumnSpec } from '@/core/project/project';

const BATCH = 5000;
const QUERY_CANCELED = '57014';

interface Field {
  name: string;
  dataTypeID: number;
  dataTypeModifier: number;
}

/** A `postgres` connection, through `pg`. The pool is created on first use, from the URL the env gives. */
export class PostgresConnection implements ExternalConnection {
  private pool?: Pool;

  constructor(
    readonly name: string,
    private readonly url: () => string,
    private readonly poolSize: number,
  ) {}

  /** Runs `work` in a read-only transaction with exact, UTC text output. */
  private async readOnly<T>(
    work: (client: PoolClient) => Promise<T>,
    statementTimeoutMs?: number,
  ): Promise<T> {
    this.pool ??= new Pool({ connectionString: this.url(), max: this.poolSize });
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN TRANSACTION READ ONLY');
      await client.query("SET LOCAL TimeZone = 'UTC'");
      await client.query("SET LOCAL DateStyle = 'ISO, YMD'");
      if (statementTimeoutMs !== undefined) {
        await client.query(
          `SET LOCAL statement_timeout = ${Math.max(1, Math.round(statementTimeoutMs))}`,
        );
      }
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  copyInto(
    target: DuckDBConnection,
    table: string,
    sql: string,
    columns: readonly ColumnSpec[],
    signal?: AbortSignal,
  ): Promise<number> {
    // Rows arrive as text through a cursor, are appended to an all-VARCHAR staging table, and are cast once
    // into the final types: exact, and memory stays bounded by one batch.
    const staging = quoteIdentifier(`${table}__staging`);
    return this.readOnly(async (client) => {
      await client.query(`DECLARE drey_source NO SCROLL CURSOR FOR ${sql}`);
      const fetch = () =>
        client.query<(string | null)[]>({
          text: `FETCH ${BATCH} FROM drey_source`,
          rowMode: 'array',
          types: TEXT_TYPES,
        });
      let batch = await fetch();
      const fields: Field[] = batch.fields;
      const list = fields.map((field) => `${quoteIdentifier(field.name)} VARCHAR`).join(', ');
      await target.run(`CREATE TABLE ${staging} (${list})`);
      const appender = await target.createAppender(`${table}__staging`);
      let count = 0;
      try {
        for (;;) {
          for (const row of batch.rows) {
            for (const cell of row) {
              if (cell === null) appender.appendNull();
              else appender.appendVarchar(cell);
            }
            appender.endRow();
          }
          count += batch.rows.length;
          if (batch.rows.length < BATCH) break;
          signal?.throwIfAborted();
          batch = await fetch();
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      const casts = fields.map((field) => {
        const declared = columns.find((column) => column.name === field.name)?.databaseType;
        const type = declared ?? postgresType(field.dataTypeID, field.dataTypeModifier).duckdb;
        const name = quoteIdentifier(field.name);
        return `CAST(${name} AS ${type}) AS ${name}`;
      });
      await target.run(
        `CREATE TABLE ${quoteIdentifier(table)} AS SELECT ${casts.join(', ')} FROM ${staging}`,
      );
      await target.run(`DROP TABLE ${staging}`);
      return count;
    });
  }

  async plan(sql: string, binds: readonly BoundValue[], limits: QueryLimits): Promise<void> {
    // Not through query(): Postgres declares no cursor over an EXPLAIN.
    await this.readOnly(async (client) => {
      await client.query({ text: `EXPLAIN ${sql}`, values: binds.map(postgresParameter) });
    }, limits.timeoutMs);
  }

  async query(
    sql: string,
    binds: readonly BoundValue[],
    limits: QueryLimits,
  ): Promise<QueryResult> {
    try {
      return await this.readOnly(async (client) => {
        // A cursor stops at the row limit instead of loading a huge result into memory.
        await client.query({
          text: `DECLARE drey_view NO SCROLL CURSOR FOR ${sql}`,
          values: binds.map(postgresParameter),
        });
        const result = await client.query<(string | null)[]>({
          text: `FETCH ${limits.maxRows + 1} FROM drey_view`,
          rowMode: 'array',
          types: TEXT_TYPES,
        });
        const types = result.fields.map((field) =>
          postgresType(field.dataTypeID, field.dataTypeModifier),
        );
        const rows = result.rows
          .slice(0, limits.maxRows)
          .map((row) =>
            row.map((cell, index): JsonValue => (cell === null ? null : types[index].json(cell))),
          );
        return {
          columns: result.fields.map((field, index) => ({
            name: field.name,
            type: types[index].type,
            databaseType: types[index].postgres,
          })),
          rows,
          truncated: result.rows.length > limits.maxRows,
        };
      }, limits.timeoutMs);
    } catch (error) {
      if ((error as { code?: string }).code === QUERY_CANCELED) {
        throw new DomainError(
          'query_timeout',
          `The query ran longer than ${limits.timeoutMs / 1000} s and was stopped`,
        );
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }
}
