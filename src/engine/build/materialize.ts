import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Env, ExternalConnections } from '@/engine/connections/connection-registry';
import { renderBuiltSql } from '@/engine/query/model-sql';
import { quoteIdentifier, quoteString } from '@/engine/sql-text';
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
  return connection.run(`CREATE TABLE ${quoteIdentifier(model.name)} AS\n${sql}`);
}

function copySource(
  connection: DuckDBConnection,
  connections: ExternalConnections,
  source: SourceModel,
): Promise<number> {
  const sql = source.sql ?? `SELECT * FROM ${(source.table ?? []).map(quoteIdentifier).join('.')}`;
  return connections.get(source.connection).copyInto(connection, source.name, sql, source.columns);
}

/** Creates the model's table in the environment being built; returns its row count. */
export async function materialize(
  connection: DuckDBConnection,
  project: Project,
  connections: ExternalConnections,
  model: BuiltModel,
  env: Env = {},
): Promise<number> {
  switch (model.kind) {
    case 'seed':
      await loadSeed(connection, project, model);
      break;
    case 'source':
      await copySource(connection, connections, model);
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
