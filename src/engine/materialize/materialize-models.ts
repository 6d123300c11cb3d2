import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Env, ExternalConnections } from '@/engine/connections/connection-registry';
import { renderBuiltSql } from '@/engine/query/model-sql';
import { quoteIdentifier, quoteString } from '@/engine/sql/sql-text';
import { parseEngineError, sourcePosition } from '@/engine/check/engine-error-position';
import type { BuildModel, Project, SeedModel, SourceModel } from '@/core/project/project';

export type BuiltModel = SeedModel | SourceModel | BuildModel;

function loadSeed(connection: DuckDBConnection, project: Project, seed: SeedModel) {
  // Declared types are passed to the CSV reader; the other columns are sniffed.
  const typed = seed.columns.filter((column) => column.databaseType);
  const types = typed.length
    ? `, types = {${typed
        .map((column) => `${quoteString(column.name)}: ${quoteString(column.databaseType ?? '')}`)
        .join(', ')}}`
    : '';
  const file = quoteString(join(project.dir, seed.csvFile));
  return connection.run(
    `CREATE TABLE ${quoteIdentifier(seed.name)} AS SELECT * FROM read_csv(${file}, header = true${types})`,
  );
}

function buildTable(connection: DuckDBConnection, project: Project, model: BuildModel, env: Env) {
  // Build models read no selections, so nothing is bound: the rendered SQL is the statement.
  const { sql } = renderBuiltSql(
    project,
    model.sqlFile,
    model.sql,
    `build model "${model.name}"`,
    env,
  );
  const statement = `CREATE TABLE ${quoteIdentifier(model.name)} AS\n${sql}`;
  return connection.run(statement).catch((error: unknown) => {
    // The engine counts lines from the CREATE line; the file is the model's template.
    const text = error instanceof Error ? error.message : String(error);
    const { message, line, column } = parseEngineError(text, statement);
    const place =
      line !== undefined && line > 1 && column !== undefined
        ? sourcePosition(sql, line - 1, column, model.sql)
        : undefined;
    throw new LocatedError(
      place ? message : text,
      place ? `${model.sqlFile}, line ${place.line}, column ${place.column}` : model.sqlFile,
    );
  });
}

/** An engine error with the place in the project it comes from (file, line and column when known). */
export class LocatedError extends Error {
  constructor(
    message: string,
    readonly place: string,
  ) {
    super(message);
  }
}

function copySource(
  connection: DuckDBConnection,
  connections: ExternalConnections,
  source: SourceModel,
  signal?: AbortSignal,
): Promise<number> {
  const sql = source.sql ?? `SELECT * FROM ${(source.table ?? []).map(quoteIdentifier).join('.')}`;
  return connections
    .get(source.connection)
    .copyInto(connection, source.name, sql, source.columns, signal);
}

/**
 * Creates the model's table in the environment being built; returns its row count. `signal` stops a
 * source's copy between batches (the build's interrupt stops DuckDB's statements).
 */
export async function materialize(
  connection: DuckDBConnection,
  project: Project,
  connections: ExternalConnections,
  model: BuiltModel,
  env: Env = {},
  signal?: AbortSignal,
): Promise<number> {
  switch (model.kind) {
    case 'seed':
      await loadSeed(connection, project, model);
      break;
    case 'source':
      await copySource(connection, connections, model, signal);
      break;
    case 'build':
      await buildTable(connection, project, model, env);
      break;
  }
  const count = await connection.runAndReadAll(
    `SELECT count(*) FROM ${quoteIdentifier(model.name)}`,
  );
  return Number(count.getRows()[0][0]);
}
