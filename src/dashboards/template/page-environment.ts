import { Environment, ILoader, LoaderSource, Template, runtime } from 'nunjucks';
import { chartHtml } from '@/dashboards/template/chart-helper';
import { ValueFormat, formatValue } from '@/dashboards/template/formats';
import { HelperError } from '@/dashboards/template/helper-input';
import {
  BOOT_SCRIPT,
  CONTENT_SECURITY_POLICY,
  LAYOUT,
  LAYOUT_NAME,
  REPORT_REFUSALS,
  chartJsSource,
  resizeScript,
} from '@/dashboards/template/page-layout';
import { PAGE_CSS } from '@/dashboards/template/page-style';
import { statHtml } from '@/dashboards/template/stat-helper';
import { tableHtml } from '@/dashboards/template/table-helper';

const BUILT_IN: Record<string, string> = { [LAYOUT_NAME]: LAYOUT };

/** Serves the built-in layout only: a project template cannot include files, its own or the server's. */
class BuiltInLoader implements ILoader {
  getSource(name: string): LoaderSource {
    const src = BUILT_IN[name];
    // Nunjucks turns a null source into "template not found: <name>".
    if (src === undefined) return null as unknown as LoaderSource;
    return { src, path: name, noCache: false };
  }
}

function safe(html: string): runtime.SafeString {
  return new runtime.SafeString(html);
}

function helper(render: (...args: unknown[]) => string) {
  return (...args: unknown[]) => safe(render(...args));
}

/** `{{ value | number(2) }}`, `{{ '2024-03' | month }}`, `{{ '2024-03-05' | date }}`. */
function formatFilter(format: ValueFormat) {
  return (value: unknown, decimals?: unknown) => {
    if (decimals !== undefined && !(Number.isInteger(decimals) && (decimals as number) >= 0)) {
      throw new HelperError(`${format}: decimals must be a whole number`);
    }
    return formatValue(value, format, (decimals as number | undefined) ?? 2);
  };
}

/**
 * The Nunjucks environment of dashboard pages. Autoescaping is on: every value from a dataset, a selection
 * or the project reaches the page as text, so a description holding `<script>` shows as text. The helpers
 * return HTML they escaped themselves.
 */
export function createPageEnvironment(frameOrigins: readonly string[] = []): Environment {
  const environment = new Environment([new BuiltInLoader()], {
    autoescape: true,
    throwOnUndefined: false,
    // Keeps the error a helper threw as `cause`, so messages name the helper's complaint.
    dev: true,
  });
  environment.addGlobal('chart', helper(chartHtml));
  environment.addGlobal('table', helper(tableHtml));
  environment.addGlobal('stat', helper(statHtml));
  environment.addGlobal('drey', {
    css: safe(PAGE_CSS),
    boot: safe(BOOT_SCRIPT),
    reportRefusals: safe(REPORT_REFUSALS),
    policy: CONTENT_SECURITY_POLICY,
    // Absent without hosts to tell: the layout then writes no script for it.
    resize: frameOrigins.length > 0 ? safe(resizeScript(frameOrigins)) : undefined,
    get chartjs() {
      return safe(chartJsSource());
    },
  });
  for (const format of ['number', 'integer', 'month', 'date'] as const) {
    environment.addFilter(format, formatFilter(format));
  }
  return environment;
}

/** Compiles now, so that a syntax error is found when the service starts, not on a request. */
export function compilePage(environment: Environment, source: string, file: string): Template {
  return new Template(source, environment, file, true);
}
