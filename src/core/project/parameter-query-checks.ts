import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { parameterQueries } from '@/core/parameters/resolve-parameters';
import type { Model, ModelKind } from '@/core/project/project';
import { findRefs, templateSyntaxError } from '@/core/project/sql-template-check';
import type { FileContext } from '@/core/project/yaml-fields';

/** A parameter's query runs once per build, over the built tables: what it may ref. */
const BUILT: readonly ModelKind[] = ['seed', 'source', 'build'];

/** `line 3 of the query: ` for a query of several lines; nothing for one of one line. */
function placeIn(sql: string, line: number | undefined): string {
  return line !== undefined && sql.includes('\n') ? `line ${line} of the query: ` : '';
}

/**
 * The refs of the parameters' option and bounds queries, checked with the models' own: a model that does
 * not exist, or that the built environment does not hold, is a problem of project.yml naming the query,
 * found when the files are read (the build would stop at the first such query with no place to look).
 * `unread` are models whose .yml does not parse: their own problem says so.
 */
export function checkParameterQueries(
  at: FileContext,
  parameters: readonly ParameterDefinition[],
  models: readonly Model[],
  unread: ReadonlySet<string>,
): void {
  const byName = new Map(models.map((model) => [model.name, model]));
  for (const query of parameterQueries(parameters)) {
    const path = `${query.at}.sql`;
    const syntax = templateSyntaxError(query.sql, at.file);
    if (syntax)
      at.problems.add(at.file, path, `${placeIn(query.sql, syntax.line)}${syntax.message}`);
    const { refs, dynamic } = findRefs(query.sql);
    for (const line of dynamic) {
      at.problems.add(
        at.file,
        path,
        `${placeIn(query.sql, line)}ref() takes the model's name in quotes: ref('name')`,
      );
    }
    for (const ref of refs) {
      const target = byName.get(ref.name);
      const place = placeIn(query.sql, ref.line);
      if (!target) {
        if (unread.has(ref.name)) continue;
        at.problems.add(at.file, path, `${place}ref('${ref.name}'): no model named "${ref.name}"`);
      } else if (!BUILT.includes(target.kind)) {
        at.problems.add(
          at.file,
          path,
          `${place}ref('${ref.name}'): "${ref.name}" is a ${target.kind} model; a parameter's query ` +
            'reads only seeds, sources and build models',
        );
      }
    }
  }
}
