import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment, Template } from 'nunjucks';
import type { DatasetFunction } from '@/dashboards/template/dataset-passes';
import { compilePage, createPageEnvironment } from '@/dashboards/template/page-environment';
import { chartJsSource } from '@/dashboards/template/page-layout';
import type { ShownSelection } from '@/dashboards/template/selection-text';
import { Problems } from '@/core/project-errors';
import type { DashboardSpec, Project } from '@/core/project/project';
import { splitTemplateError } from '@/core/project/sql-template-check';

/** What a dashboard template sees, besides the helpers and filters of the environment. */
export interface PageContext {
  dashboard: Pick<DashboardSpec, 'name' | 'label' | 'description' | 'format'>;
  project: Pick<Project, 'name' | 'label' | 'description'>;
  /** The selections in words, for people: what the page header shows. */
  selections: ShownSelection[];
  /** The selections as data, by parameter name (`selected.date_range.start`). */
  selected: Record<string, unknown>;
  /** `2024-11-22 13:35 UTC`. */
  rendered_at: string;
  dataset: DatasetFunction;
}

/**
 * A dashboard's template failed: the file and line, and what went wrong. It is the project's fault, not
 * the caller's, so the error filter answers 500 and logs this message (never sent to the client).
 */
export class DashboardTemplateError extends Error {
  constructor(file: string, line: number | undefined, problem: string, cause: unknown) {
    super(`dashboard template ${file}${line ? ` line ${line}` : ''}: ${problem}`, { cause });
  }
}

const LITERAL_DATASET = /(?<![\w.])dataset\s*\(\s*(?:'([^'\\]*)'|"([^"\\]*)")/g;
const TAG = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
const COMMENT = /\{#[\s\S]*?#\}/g;
// `dataset` as a name of its own, in any use: a call, or the function passed on (`{% set d = dataset %}`).
const DATASET_NAME = /(?<![\w.'"])dataset(?![\w'"])/g;

/**
 * The datasets a template's text names in `dataset('literal', ...)` calls, when every use of `dataset` in
 * its tags is such a call; undefined when one is not (a name computed, the function passed on), since then
 * the page may read any dataset. Text outside tags (a page saying "dataset") is not code and does not count.
 */
function literalReads(source: string): string[] | undefined {
  const names = new Set<string>();
  for (const tag of source.replace(COMMENT, '').matchAll(TAG)) {
    const body = tag[1] ?? tag[2];
    const literal = [...body.matchAll(LITERAL_DATASET)];
    if ([...body.matchAll(DATASET_NAME)].length !== literal.length) return undefined;
    for (const match of literal) names.add(match[1] ?? match[2]);
  }
  return [...names].sort();
}

/** The project's dashboard templates, compiled once when the service starts. */
export class DashboardPages {
  private readonly environment: Environment;
  private readonly templates = new Map<string, Template>();
  /** Per dashboard, the datasets its template can read; absent when a call names one by an expression. */
  private readonly reads = new Map<string, readonly string[]>();

  /**
   * Throws a ProjectError listing every template that does not compile or names no dataset. `frameOrigins`
   * (EMBED_FRAME_ORIGINS) are the hosts a framed page tells its height.
   */
  constructor(project: Project, frameOrigins: readonly string[] = []) {
    this.environment = createPageEnvironment(frameOrigins);
    // Read now, so that a missing Chart.js stops the service rather than the first dashboard.
    chartJsSource();
    const problems = new Problems();
    for (const dashboard of project.dashboards) {
      const file = dashboard.template;
      const source = readFileSync(join(project.dir, file), 'utf8');
      try {
        this.templates.set(dashboard.name, compilePage(this.environment, source, file));
      } catch (error) {
        const { line, message } = splitTemplateError(errorText(error));
        problems.add(file, line ? `line ${line}` : '', message);
      }
      for (const match of source.matchAll(LITERAL_DATASET)) {
        const name = match[1] ?? match[2];
        if (!project.datasets.some((dataset) => dataset.name === name)) {
          const line = source.slice(0, match.index).split('\n').length;
          problems.add(file, `line ${line}`, `dataset('${name}'): no dataset named "${name}"`);
        }
      }
      const reads = literalReads(source);
      if (reads) this.reads.set(dashboard.name, reads);
    }
    problems.throwIfAny();
  }

  /**
   * The datasets a dashboard's page can read, found in its template's text (see {@link literalReads}), or
   * every dataset of the project when the text cannot tell: what a page depends on must be known before it
   * is rendered, to key a cached page.
   */
  datasetsRead(dashboard: DashboardSpec, project: Project): readonly string[] {
    return this.reads.get(dashboard.name) ?? project.datasets.map((dataset) => dataset.name);
  }

  render(dashboard: DashboardSpec, context: PageContext): string {
    const template = this.templates.get(dashboard.name);
    if (!template) throw new Error(`No template for dashboard "${dashboard.name}"`);
    try {
      return template.render(context);
    } catch (error) {
      const { line, message } = splitTemplateError(errorText(error));
      // Nunjucks counts lines from 0 in errors raised while rendering (from 1 in syntax errors).
      const shown = line === undefined ? undefined : line + 1;
      throw new DashboardTemplateError(dashboard.template, shown, cleanProblem(message), error);
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Nunjucks prefixes nested errors with their class names; the reader needs the rest. */
function cleanProblem(problem: string): string {
  return problem.replace(/^(?:[A-Za-z]*Error: )+/, '');
}
