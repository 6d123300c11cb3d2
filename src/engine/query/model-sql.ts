import type { Env } from '@/engine/connections/connection-registry';
import { quoteIdentifier } from '@/engine/sql/sql-text';
import { Binder } from '@/engine/templating/binder';
import type { BoundValue } from '@/engine/sql/bound-value';
import { renderTemplate, statementBody } from '@/engine/templating/sql-renderer';
import { templateContext } from '@/engine/templating/template-context';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import {
  findModel,
  Model,
  ModelKind,
  Project,
  RuntimeModel,
  type DbviewModel,
} from '@/core/project/project';

/** Where a composed query runs: in the DuckDB environment, or on an external connection. */
export type QueryTarget = { kind: 'duckdb' } | { kind: 'connection'; connection: string };

export interface ComposedQuery {
  target: QueryTarget;
  sql: string;
  binds: BoundValue[];
  /** Each model's SQL as rendered, dependencies first, numbered like `sql`: what `compile` shows. */
  parts: { model: string; kind: ModelKind; sql: string }[];
}

/** What a request brings to runtime and dbview models. */
export interface RequestValues {
  selections: SelectionValues;
  caller: CallerView;
}

const BUILT: readonly ModelKind[] = ['seed', 'source', 'build'];

/** `ref()` for a template: checks the kind it may read (the loader did, for literal names) and names it. */
function refResolver(
  project: Project,
  allowed: readonly ModelKind[],
  name: (model: Model) => string = (model) => quoteIdentifier(model.name),
): (target: string) => string {
  return (target) => {
    const model = findModel(project, target);
    if (!model) throw new Error(`no model named "${target}"`);
    if (!allowed.includes(model.kind)) {
      throw new Error(`"${target}" is a ${model.kind} model, which this SQL cannot read`);
    }
    return name(model);
  };
}

/**
 * SQL computed once for everyone, over the built tables: a build model or a parameter's option query. Only
 * build models get `env`: what they read of it is baked into the build.
 */
export function renderBuiltSql(
  project: Project,
  file: string,
  sql: string,
  what: string,
  env?: Env,
): { sql: string; binds: BoundValue[] } {
  const binder = new Binder();
  const context = templateContext({
    binder,
    ref: refResolver(project, BUILT),
    userFields: project.userFields,
    what,
    env,
  });
  const finished = binder.finish(statementBody(renderTemplate(file, sql, context)));
  return { sql: finished.sql, binds: finished.binds };
}

/** The runtime models `names` read, transitively, themselves included, in dependency order. */
export function runtimeClosure(project: Project, names: readonly string[]): RuntimeModel[] {
  const needed = new Set<string>();
  const visit = (name: string): void => {
    const model = findModel(project, name);
    if (model?.kind !== 'runtime' || needed.has(name)) return;
    needed.add(name);
    model.refs.forEach(visit);
  };
  names.forEach(visit);
  return project.models.filter(
    (model): model is RuntimeModel => model.kind === 'runtime' && needed.has(model.name),
  );
}

const LEADING_WITH = /^((?:\s|--[^\n]*\n|\/\*[\s\S]*?\*\/)*)with(\s+recursive)?\s/i;

/**
 * Prepends CTEs to a statement. A statement with its own WITH gets them added to that clause, since SQL
 * allows only one WITH at the top.
 */
export function withCtes(
  ctes: readonly { name: string; sql: string }[],
  statement: string,
): string {
  if (ctes.length === 0) return statement;
  const list = ctes.map((cte) => `${quoteIdentifier(cte.name)} AS (\n${cte.sql}\n)`).join(',\n');
  const leading = LEADING_WITH.exec(statement);
  if (!leading) return `WITH ${list}\n${statement}`;
  const recursive = leading[2] ? ' RECURSIVE' : '';
  return `${leading[1]}WITH${recursive} ${list},\n${statement.slice(leading[0].length)}`;
}

function renderRuntime(
  project: Project,
  binder: Binder,
  request: RequestValues,
  model: RuntimeModel,
): string {
  const context = templateContext({
    binder,
    ref: refResolver(project, [...BUILT, 'runtime']),
    selections: request.selections,
    caller: request.caller,
    userFields: project.userFields,
    what: `runtime model "${model.name}"`,
  });
  return statementBody(renderTemplate(model.sqlFile, model.sql, context));
}

/**
 * Renders a statement (a runtime model's, or ad-hoc SQL) with the runtime models it reads as CTEs, all with
 * one binder so that placeholders are numbered once across the whole statement.
 */
function composeDuckdb(
  project: Project,
  request: RequestValues,
  main: { model?: RuntimeModel; sql?: string },
  reads: readonly string[],
): ComposedQuery {
  const binder = new Binder();
  const dependencies = runtimeClosure(project, reads).filter((model) => model !== main.model);
  const parts = dependencies.map((model) => ({
    model: model.name,
    kind: model.kind,
    sql: renderRuntime(project, binder, request, model),
  }));
  const statement = main.model
    ? renderRuntime(project, binder, request, main.model)
    : statementBody(main.sql ?? '');
  const ctes = parts.map((part) => ({ name: part.model, sql: part.sql }));
  if (main.model) parts.push({ model: main.model.name, kind: 'runtime', sql: statement });
  const finished = binder.finish(withCtes(ctes, statement));
  return {
    target: { kind: 'duckdb' },
    sql: finished.sql,
    binds: finished.binds,
    // Only `compile` shows them: numbered when asked, not on every request.
    get parts() {
      return parts.map((part) => ({ ...part, sql: finished.apply(part.sql) }));
    },
  };
}

function composeDbview(
  project: Project,
  model: DbviewModel,
  request: RequestValues,
): ComposedQuery {
  const binder = new Binder();
  const context = templateContext({
    binder,
    // A dbview reads its connection's tables; a source model that names one stands for it.
    ref: refResolver(project, ['source'], (target) => {
      if (target.kind !== 'source' || target.connection !== model.connection || !target.table) {
        throw new Error(`"${target.name}" is not a table of connection "${model.connection}"`);
      }
      return target.table.map(quoteIdentifier).join('.');
    }),
    selections: request.selections,
    caller: request.caller,
    userFields: project.userFields,
    what: `dbview model "${model.name}"`,
  });
  const sql = statementBody(renderTemplate(model.sqlFile, model.sql, context));
  const finished = binder.finish(sql);
  return {
    target: { kind: 'connection', connection: model.connection },
    sql: finished.sql,
    binds: finished.binds,
    parts: [{ model: model.name, kind: 'dbview', sql: finished.sql }],
  };
}

/** The statement that computes a model for one request. */
export function composeModel(
  project: Project,
  name: string,
  request: RequestValues,
): ComposedQuery {
  const model = findModel(project, name);
  if (!model) throw new Error(`no model named "${name}"`);
  switch (model.kind) {
    case 'seed':
    case 'source':
    case 'build':
      return {
        target: { kind: 'duckdb' },
        sql: `SELECT * FROM ${quoteIdentifier(model.name)}`,
        binds: [],
        parts: [],
      };
    case 'runtime':
      return composeDuckdb(project, request, { model }, model.refs);
    case 'dbview':
      return composeDbview(project, model, request);
  }
}

/** Ad-hoc SQL (not a template) over the built tables and the runtime models it names. */
export function composeAdhoc(
  project: Project,
  sql: string,
  names: readonly string[],
  request: RequestValues,
): ComposedQuery {
  return composeDuckdb(project, request, { sql }, names);
}
