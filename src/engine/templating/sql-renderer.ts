import { Environment, Template } from 'nunjucks';
import { TemplateUseError } from '@/engine/templating/binder';
import { splitTemplateError } from '@/core/project/sql-template-check';

/**
 * Autoescaping is on, not for HTML, but because it makes Nunjucks call `toString()` on every output value:
 * that is how a selection renders as a placeholder (see binder.ts). Project text (ref names, option
 * fields) is passed as safe strings. No loader: a template cannot include files.
 */
// `dev` keeps the error a template threw as `cause` (otherwise Nunjucks copies only its message).
const environment = new Environment([], { autoescape: true, throwOnUndefined: true, dev: true });

const compiled = new Map<string, Template>();

/** A template failed to render; names the file and line and says what went wrong, without a stack. */
export class TemplateRenderError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly problem: string,
  ) {
    super(`${file}${line ? ` line ${line}` : ''}: ${problem}`);
  }
}

function templateOf(file: string, sql: string): Template {
  const key = `${file}\u0000${sql}`;
  let template = compiled.get(key);
  if (!template) {
    template = new Template(sql, environment, file, true);
    compiled.set(key, template);
  }
  return template;
}

/** Nunjucks prefixes nested errors with "Error: " or "TemplateUseError: "; the reader needs the rest. */
function cleanProblem(problem: string): string {
  return problem.replace(/^(?:[A-Za-z]*Error: )+/, '');
}

/** The first line of the template mentioning `source`, when Nunjucks gave no line. */
function lineOf(sql: string, source: string | undefined): number | undefined {
  if (!source) return undefined;
  const index = sql.indexOf(source);
  return index < 0 ? undefined : sql.slice(0, index).split('\n').length;
}

export function renderTemplate(file: string, sql: string, context: object): string {
  try {
    return templateOf(file, sql).render(context);
  } catch (error) {
    const located = splitTemplateError(error instanceof Error ? error.message : String(error));
    const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
    const source = cause instanceof TemplateUseError ? cause.source : undefined;
    const line = located.line ?? lineOf(sql, source);
    throw new TemplateRenderError(file, line, cleanProblem(located.message));
  }
}

/** A model's SQL as the body of `CREATE TABLE ... AS` or of a CTE: no trailing semicolons. */
export function statementBody(sql: string): string {
  return sql.trim().replace(/(;\s*)+$/, '');
}
