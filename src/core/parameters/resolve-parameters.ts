import { checkOptionReferences } from '@/core/parameters/check-references';
import { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import {
  ParameterDefinition,
  ProblemSink,
  ValueDefinition,
  isRecord,
} from '@/core/parameters/parameter-definition';
import { optionsFromRows } from '@/core/parameters/parse-options';
import { parseValueSpec } from '@/core/parameters/value-spec';
import { ProjectError, Problems } from '@/core/project-errors';

/** A parameter's option or bounds query, and where project.yml writes it (`parameters[5].options_from`). */
export interface ParameterQuery {
  parameter: string;
  sql: string;
  at: string;
}

/** The build runs these (rendering `{{ ref(...) }}`) and hands their rows to `resolveParameters`. */
export function parameterQueries(defs: readonly ParameterDefinition[]): ParameterQuery[] {
  return defs.flatMap((def) => {
    const sql = def.kind === 'select' ? def.optionsSql : def.fromQuery?.sql;
    const key = def.kind === 'select' ? 'options_from' : 'from_query';
    return sql ? [{ parameter: def.name, sql, at: `${def.at}.${key}` }] : [];
  });
}

/** Some of a project's parameter queries failed to run: each failure names its query in project.yml. */
export class ParameterQueryError extends ProjectError {}

/** Row columns of `from_query` per widget; ranges take their default as two columns. */
const ROW_COLUMNS: Record<Exclude<ValueDefinition['widget'], 'text'>, readonly string[]> = {
  date: ['min', 'max', 'default'],
  number: ['min', 'max', 'increment', 'default'],
  date_range: ['min', 'max', 'default_start', 'default_end'],
  number_range: ['min', 'max', 'increment', 'default_lower', 'default_upper'],
};

/**
 * The catalog of a project on one environment: runs each option and bounds query with `query`, then
 * resolves. Throws a ProjectError listing every problem (a query whose rows do not fit, say).
 */
export async function buildCatalog(
  project: { parameters: readonly ParameterDefinition[]; manifestFile: string },
  query: (sql: string) => Promise<Record<string, unknown>[]>,
): Promise<ParameterCatalog> {
  const results: Record<string, Record<string, unknown>[]> = {};
  // Every query runs, and each failure is a problem naming its query: a mistake in one does not hide the
  // others' until it is fixed. The rows are resolved only once all of them ran.
  const failed = new Problems();
  for (const { parameter, sql, at } of parameterQueries(project.parameters)) {
    try {
      results[parameter] = await query(sql);
    } catch (error) {
      failed.add(project.manifestFile, `${at}.sql`, queryFailure(error));
    }
  }
  if (failed.list.length > 0) throw new ParameterQueryError(failed.list);
  const problems = new Problems();
  const catalog = resolveParameters(project.parameters, results, {
    file: project.manifestFile,
    problems,
  });
  if (problems.list.length > 0) throw new ProjectError(problems.list);
  return catalog;
}

/** An engine's or a template's message, said of the query (its `LINE 3` counts the query's lines). */
function queryFailure(error: unknown): string {
  // Not `instanceof Error`: the native driver's errors may come from another realm (a test runner's).
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(error);
  const lines = text.replace(/^query: /, '').split('\n');
  const at = lines.findIndex((line) => /^LINE \d+:/.test(line));
  if (at >= 0) {
    // The engine's `^` under the line points at a column: it moves with the words put before it.
    const said = lines[at].replace(/^LINE (\d+):/, 'line $1 of the query:');
    if (lines[at + 1] !== undefined) {
      lines[at + 1] = ' '.repeat(said.length - lines[at].length) + lines[at + 1];
    }
    lines[at] = said;
  }
  return lines.join('\n');
}

/**
 * Completes the definitions with the rows of their queries (by parameter name) and checks what depends on
 * them. Problems name the query (`parameters[5].options_from`) and the row. The definitions are not
 * changed, so they serve every build; the catalog is new and immutable. Use it only when no problem was
 * added.
 */
export function resolveParameters(
  defs: readonly ParameterDefinition[],
  results: Record<string, Record<string, unknown>[]>,
  ctx: ProblemSink,
): ParameterCatalog {
  const resolved = defs.map((def) => resolveOne(def, results, ctx));
  checkOptionReferences(resolved, ctx, 'resolve');
  return new ParameterCatalog(resolved);
}

function resolveOne(
  def: ParameterDefinition,
  results: Record<string, Record<string, unknown>[]>,
  sink: ProblemSink,
): ParameterDefinition {
  const rowsAt = (path: string): Record<string, unknown>[] | null => {
    const rows = Object.hasOwn(results, def.name) ? results[def.name] : undefined;
    if (Array.isArray(rows) && rows.every(isRecord)) return rows;
    sink.problems.add(sink.file, path, 'the query has no result: it did not run');
    return null;
  };
  if (def.kind === 'select') {
    if (def.optionsSql === null) return def;
    const at = `${def.at}.options_from`;
    const rows = rowsAt(at);
    if (rows === null) return { ...def, options: [] };
    const rules = {
      userGroupField: def.userGroupField,
      hasParent: def.parent !== null,
      fromRows: true,
    };
    return { ...def, options: optionsFromRows(rows, at, rules, sink) };
  }
  if (def.fromQuery === null || def.widget === 'text') return def;
  const at = `${def.at}.from_query`;
  const rows = rowsAt(at);
  if (rows === null) return { ...def, variants: [] };
  if (rows.length !== 1) {
    sink.problems.add(sink.file, at, `the query must return one row; it returned ${rows.length}`);
    return { ...def, variants: [] };
  }
  const [row] = rows;
  const columns = ROW_COLUMNS[def.widget];
  const unknown = Object.keys(row).filter((column) => !columns.includes(column));
  if (unknown.length > 0) {
    sink.problems.add(
      sink.file,
      at,
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; expected ${columns.join(', ')}`,
    );
  }
  const origin = { path: at, row: 0 };
  const merged = mergeRow(def.fromQuery.written, row);
  const spec = parseValueSpec(def.widget, merged, origin, sink, 'complete');
  return { ...def, variants: spec ? [{ parentOptionIds: null, spec, origin }] : [] };
}

/** The row's non-null columns replace the values written beside `from_query`. */
function mergeRow(
  written: Record<string, unknown>,
  row: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...written };
  for (const key of ['min', 'max', 'increment', 'default']) {
    if (row[key] !== undefined && row[key] !== null) merged[key] = row[key];
  }
  const pair = Array.isArray(written.default) ? (written.default as unknown[]) : [];
  for (const [lower, upper] of [
    ['default_start', 'default_end'],
    ['default_lower', 'default_upper'],
  ]) {
    if ((row[lower] ?? row[upper] ?? null) !== null) {
      merged.default = [row[lower] ?? pair[0] ?? null, row[upper] ?? pair[1] ?? null];
    }
  }
  return merged;
}
