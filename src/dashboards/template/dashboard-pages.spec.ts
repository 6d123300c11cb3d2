import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleDataset, MONTHLY_TOTALS } from '@/dashboards/template/__fixtures__/expenses-data';
import {
  DashboardPages,
  DashboardTemplateError,
  PageContext,
} from '@/dashboards/template/dashboard-pages';
import { renderWithDatasets } from '@/dashboards/template/dataset-passes';
import { ProjectError } from '@/core/project-errors';
import type { Project } from '@/core/project/project';
import { loadProject } from '@/core/project/project-loader';

const EXAMPLE = join(__dirname, '..', '..', '..', 'examples', 'expenses');

function context(project: Project, name: string): Omit<PageContext, 'dataset'> {
  const dashboard = project.dashboards.find((d) => d.name === name)!;
  return {
    dashboard,
    project,
    selections: [
      { name: 'start_date', label: 'Start Date', text: '2024-01-01' },
      { name: 'end_date', label: 'End Date', text: '2024-12-31' },
    ],
    selected: { start_date: '2024-01-01', end_date: '2024-12-31' },
    rendered_at: '2024-11-22 13:35 UTC',
  };
}

async function page(project: Project, name: string, pages = new DashboardPages(project)) {
  const dashboard = project.dashboards.find((d) => d.name === name)!;
  const calls: string[] = [];
  const html = await renderWithDatasets(
    (dataset) => pages.render(dashboard, { ...context(project, name), dataset }),
    (batch) => {
      calls.push(...batch.map((call) => call.key));
      return Promise.resolve(batch.map(exampleDataset));
    },
  );
  return { html, calls };
}

/** A copy of the example with one file added or replaced. */
function exampleWith(files: Record<string, string>): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'drey-dashboards-'));
  cpSync(EXAMPLE, dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('the example dashboards', () => {
  const project = loadProject(EXAMPLE);

  it('tells a framing host its height only where embedding is configured, addressed to its origins', async () => {
    const alone = (await page(project, 'expenses_report')).html;
    expect(alone).not.toContain('drey:resize');
    const hosts = ['https://app.example.com', 'http://127.0.0.1:8080'];
    const framed = (await page(project, 'expenses_report', new DashboardPages(project, hosts)))
      .html;
    expect(framed).toContain('drey:resize');
    expect(framed).toContain(`var origins = ${JSON.stringify(hosts)};`);
    // Never to any page that frames it.
    expect(framed).not.toMatch(/postMessage\([^)]*'\*'/);
  });

  it('report: a self-contained page with the title, selections, monthly figures, chart and table', async () => {
    const { html, calls } = await page(project, 'expenses_report');
    expect(calls).toHaveLength(1);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<title>Expenses Report · Expenses</title>');
    expect(html).toContain('<h1>Expenses Report</h1>');
    expect(html).toContain('<dt>Start Date</dt><dd>2024-01-01</dd>');
    for (const [, total] of MONTHLY_TOTALS) {
      const [whole, cents] = total.toFixed(2).split('.');
      expect(html).toContain(
        `<td class="num">${Number(whole).toLocaleString('en-US')}.${cents}</td>`,
      );
    }
    expect(html).toContain('<td class="num">30,226.16</td>');
    expect(html).toContain('<td>Mar 2024</td>');
    expect(html).toContain('class="drey-chart"');
    expect(html).toContain('Chart.js v4');
    expect(html).toContain('window.__dreyReady = true');
    expect(html).toContain('@media print');
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  });

  it('dashboard: a line chart by month and bars by subcategory, two distinct dataset calls', async () => {
    const { html, calls } = await page(project, 'expenses_dashboard');
    expect(calls).toHaveLength(2);
    const charts = [
      ...html.matchAll(/<script type="application\/json" class="drey-chart">(.*?)<\/script>/g),
    ].map(
      (m) => JSON.parse(m[1]) as { type: string; data: { labels: unknown[] }; options: object },
    );
    expect(charts.map((c) => c.type)).toEqual(['line', 'bar']);
    expect(charts[0].data.labels.slice(0, 2)).toEqual([['Jan', '2024'], 'Feb']);
    expect(charts[1].data.labels[0]).toBe('Electronics');
    expect(charts[1].options).toMatchObject({ indexAxis: 'y' });
    expect(html).toContain('<div class="stat-value">30,226.16</div>');
    expect(html).toContain('<div class="stat-value">Mar 2024</div>');
  });

  it('escapes what the project and the data say: a description with <script> does not run', async () => {
    const evil = { ...project, label: '<script>alert(1)</script>' };
    evil.dashboards = project.dashboards.map((d) => ({
      ...d,
      description: '<script>alert("x")</script>',
    }));
    const { html } = await page(evil, 'expenses_report', new DashboardPages(evil));
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });
});

describe('DashboardPages at start-up', () => {
  it('names a template that does not compile, and a dataset() of an unknown dataset', () => {
    const copy = exampleWith({
      'dashboards/expenses_report.html':
        '{% extends "drey/dashboard.html" %}\n{% block content %}{% if %}{% endblock %}',
      'dashboards/expenses_dashboard.html': "{% set x = dataset('ghost') %}",
    });
    try {
      const project = loadProject(copy.dir);
      let problems: string[] = [];
      try {
        new DashboardPages(project);
      } catch (error) {
        if (!(error instanceof ProjectError)) throw error;
        problems = error.problems.map((p) => `${p.file}|${p.path}|${p.message}`);
      }
      expect(problems).toEqual([
        `dashboards/expenses_dashboard.html|line 1|dataset('ghost'): no dataset named "ghost"`,
        expect.stringMatching(/^dashboards\/expenses_report.html\|line 2\|/),
      ]);
    } finally {
      copy.remove();
    }
  });

  it('a helper called wrongly fails the render with the file, the line and the helper’s complaint', async () => {
    const copy = exampleWith({
      'dashboards/expenses_report.html':
        '{% extends "drey/dashboard.html" %}\n{% set rows = dataset("expenses_by_month").rows %}\n{% block content %}\n{{ chart(rows, x="month", y="totl") }}\n{% endblock %}',
    });
    try {
      const project = loadProject(copy.dir);
      const failure = page(project, 'expenses_report');
      await expect(failure).rejects.toThrow(DashboardTemplateError);
      await expect(failure).rejects.toThrow(
        /dashboards\/expenses_report.html line 4: chart\(\): no column "totl" in the rows \(they have month, total_amount\)/,
      );
    } finally {
      copy.remove();
    }
  });
});

/** What a page depends on must be known before it renders: the key of a cached page names it. */
describe('DashboardPages.datasetsRead', () => {
  const every = loadProject(EXAMPLE).datasets.map((dataset) => dataset.name);
  const readsOf = (template: string): readonly string[] => {
    const copy = exampleWith({ 'dashboards/expenses_report.html': template });
    try {
      const project = loadProject(copy.dir);
      const dashboard = project.dashboards.find((d) => d.name === 'expenses_report')!;
      return new DashboardPages(project).datasetsRead(dashboard, project);
    } finally {
      copy.remove();
    }
  };

  it('the example: the datasets its calls name, each once', () => {
    const project = loadProject(EXAMPLE);
    const pages = new DashboardPages(project);
    const named = (name: string) =>
      pages.datasetsRead(
        project.dashboards.find((d) => d.name === name)!,
        project,
      );
    expect(named('expenses_report')).toEqual(['expenses_by_month']);
    expect(named('expenses_dashboard')).toEqual(['expenses_grouped']);
    // Not every dataset: the fallback below would also pass the check above only by accident.
    expect(every.length).toBeGreaterThan(2);
  });

  it('the word in the page’s text or a comment is not a call; a computed name or the function passed on is every dataset', () => {
    expect(
      readsOf(
        "<p>This dataset shows dataset(x)</p>{# dataset(y) #}{% set m = dataset('expenses_by_month') %}",
      ),
    ).toEqual(['expenses_by_month']);
    expect(readsOf("{% set n = 'expenses_by_month' %}{% set m = dataset(n) %}")).toEqual(every);
    expect(readsOf("{% set d = dataset %}{% set m = d('expenses_by_month') %}")).toEqual(every);
    expect(
      readsOf('{{ dataset ("expenses_grouped", {group_by: "month"}).rows | length }}'),
    ).toEqual(['expenses_grouped']);
  });
});
